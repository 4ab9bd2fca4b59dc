// convert --modelfile against Ollama's documented Modelfile grammar (ollama/ollama's Modelfile
// reference page: "# comment" lines and "INSTRUCTION arguments" lines, instructions FROM,
// PARAMETER, TEMPLATE, SYSTEM, ADAPTER, LICENSE, MESSAGE, REQUIRES, CAPABILITY; "PARAMETER <name>
// <value>" with the names of its parameter table). The parser below is written from that page, not
// from rebox's writer; the FROM lines must name exactly the files convert wrote, every stop string
// must be a token of the fixture's tokenizer.json, its end-of-turn token among them, and the
// sampling values those of generation_config.json.
#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gguf_tools/tool_fixture.hpp"
#include "test_files.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::quoted;

struct Modelfile {
    std::vector<std::string> from;
    std::multimap<std::string, std::string> parameters;  // name -> value (quotes removed)
    std::vector<std::string> errors;
};

// Ollama's grammar, from its Modelfile reference.
Modelfile parse_modelfile(const std::string& text) {
    static const std::set<std::string> instructions = {"FROM",    "PARAMETER", "TEMPLATE",
                                                       "SYSTEM",  "ADAPTER",   "LICENSE",
                                                       "MESSAGE", "REQUIRES",  "CAPABILITY"};
    static const std::set<std::string> parameters = {
        "num_ctx", "repeat_last_n", "repeat_penalty", "temperature", "seed",
        "stop",    "num_predict",   "top_k",          "top_p",       "min_p"};
    Modelfile m;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        const size_t space = line.find(' ');
        std::string instruction = line.substr(0, space);
        std::transform(instruction.begin(), instruction.end(), instruction.begin(), ::toupper);
        const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
        if (!instructions.count(instruction)) m.errors.push_back("unknown instruction: " + line);
        if (instruction == "FROM") m.from.push_back(rest);
        if (instruction != "PARAMETER") continue;
        const size_t gap = rest.find(' ');
        const std::string name = rest.substr(0, gap);
        std::string value = gap == std::string::npos ? "" : rest.substr(gap + 1);
        if (!parameters.count(name)) m.errors.push_back("unknown parameter: " + line);
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
            value = value.substr(1, value.size() - 2);
        m.parameters.emplace(name, value);
    }
    if (m.from.empty()) m.errors.push_back("no FROM line (the one required instruction)");
    return m;
}

class ModelfileCli : public test::GgufToolTest {};

TEST_F(ModelfileCli, FollowsOllamasGrammarAndNamesEveryShard) {
    const auto model = dir_ / "model";
    ASSERT_EQ(
        test::run(quoted(test::mkfixture_cli()) + " " + quoted(model) + " --preset tiny --force")
            .exit_code,
        0);
    test::write_file(model / "generation_config.json",
                     std::string_view(R"({"temperature": 0.7, "top_k": 20, "top_p": 0.8,
                        "repetition_penalty": 1.05, "do_sample": true})"));
    const auto out = dir_ / "out" / "tiny.gguf";
    fs::create_directories(out.parent_path());
    const auto r = rebox("convert " + quoted(model) + " -o " + quoted(out) +
                         " --modelfile --split-max-size 20000 --no-verify --quiet");
    ASSERT_EQ(r.exit_code, 0) << r.output;

    std::ifstream file(dir_ / "out" / "tiny.Modelfile");
    ASSERT_TRUE(file) << "no tiny.Modelfile beside the output";
    const Modelfile m = parse_modelfile(std::string(std::istreambuf_iterator<char>(file), {}));
    EXPECT_TRUE(m.errors.empty()) << m.errors.front();

    std::vector<std::string> written;
    for (const auto& entry : fs::directory_iterator(out.parent_path()))
        if (entry.path().extension() == ".gguf")
            written.push_back("./" + entry.path().filename().string());
    std::sort(written.begin(), written.end());
    ASSERT_GT(written.size(), 1u) << "the fixture should split";
    EXPECT_EQ(m.from, written);

    std::ifstream tok(model / "tokenizer.json");
    const auto tokenizer = nlohmann::json::parse(tok);
    std::set<std::string> vocabulary;
    for (const auto& [text, id] : tokenizer["model"]["vocab"].items()) vocabulary.insert(text);
    for (const auto& added : tokenizer["added_tokens"]) vocabulary.insert(added["content"]);
    std::ifstream tc(model / "tokenizer_config.json");
    const std::string end_of_turn = nlohmann::json::parse(tc)["eos_token"];
    bool has_end_of_turn = false;
    const auto [first, last] = m.parameters.equal_range("stop");
    ASSERT_NE(first, last) << "no PARAMETER stop";
    for (auto it = first; it != last; ++it) {
        EXPECT_TRUE(vocabulary.count(it->second)) << it->second << " is not a token";
        has_end_of_turn |= it->second == end_of_turn;
    }
    EXPECT_TRUE(has_end_of_turn) << end_of_turn;

    const auto value = [&](const char* name) {
        const auto it = m.parameters.find(name);
        return it == m.parameters.end() ? std::string("absent") : it->second;
    };
    EXPECT_EQ(value("temperature"), "0.7");
    EXPECT_EQ(value("top_k"), "20");
    EXPECT_EQ(value("top_p"), "0.8");
    EXPECT_EQ(value("repeat_penalty"), "1.05");
    EXPECT_FALSE(contains(value("do_sample"), "true"));

    // A second run without --force refuses before writing anything.
    const auto again =
        rebox("convert " + quoted(model) + " -o " + quoted(dir_ / "out" / "tiny.gguf") +
              " --modelfile --split-max-size 20000 --no-verify --quiet");
    EXPECT_NE(again.exit_code, 0);
}

}  // namespace
}  // namespace rebox
