// README.md front matter as gguf-py reads it (first line "---", up to the next "---") and PyYAML
// safe_load's typing of plain scalars; expected values from the YAML 1.1 resolver rules.
#include "model/model_card.hpp"

#include <gtest/gtest.h>

#include "rebox/error.hpp"

namespace rebox {
namespace {

TEST(ModelCard, FrontMatterEndsAtTheFirstSeparator) {
    EXPECT_EQ(model_card_front_matter("---\na: 1\n---\nb: 2\n---\n"), "a: 1\n");
    EXPECT_EQ(model_card_front_matter("# title\n---\na: 1\n---\n"), "");  // not on line 1
    EXPECT_EQ(model_card_front_matter(""), "");
    EXPECT_EQ(model_card_front_matter("---\r\nx: y\r\n---\r\n"), "x: y\n");
}

TEST(ModelCard, ListsMapsQuotedAndNorwayNo) {
    const nlohmann::json card = parse_model_card(
        "---\n"
        "license:\n- apache-2.0\n- mit\n"
        "language:\n- en\n- no\n"
        "tags: [a, 'b c']\n"
        "pipeline_tag: text-generation\n"
        "version: \"1.0\"\n"
        "revision: 1.0\n"
        "flag: yes\n"
        "empty:\n"
        "model-index:\n- name: x\n  results:\n  - task: {type: t}\n"
        "---\n# Body\n",
        "README.md");
    EXPECT_EQ(card["license"], nlohmann::json::array({"apache-2.0", "mit"}));
    EXPECT_EQ(card["language"], nlohmann::json::array({"en", "no"}));  // quoted by the fix
    EXPECT_EQ(card["tags"], nlohmann::json::array({"a", "b c"}));
    EXPECT_EQ(card["version"], "1.0");
    EXPECT_TRUE(card["revision"].is_number_float());
    EXPECT_EQ(card["flag"], true);
    EXPECT_TRUE(card["empty"].is_null());
    EXPECT_EQ(card["model-index"][0]["results"][0]["task"]["type"], "t");
}

TEST(ModelCard, PlainNoOutsideAListIsFalseAndTabsAreSpaces) {
    const nlohmann::json card = parse_model_card("---\na: no\nb:\n\t- x\n---\n", "README.md");
    EXPECT_EQ(card["a"], false);
    EXPECT_EQ(card["b"], nlohmann::json::array({"x"}));
}

TEST(ModelCard, NotAMappingIsEmptyAndBadYamlIsOneLine) {
    EXPECT_TRUE(parse_model_card("---\n- a\n---\n", "README.md").empty());
    EXPECT_TRUE(parse_model_card("---\n---\n", "README.md").empty());
    try {
        parse_model_card("---\na: [1, 2\n---\n", "card/README.md");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("card/README.md"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not valid YAML"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace rebox
