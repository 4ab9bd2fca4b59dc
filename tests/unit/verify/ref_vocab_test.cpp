// verify's own vocabulary derivation (ref_vocab), on hand-written tokenizer files with the values
// worked out from convert_hf_to_gguf's get_vocab_base (holes [PAD<i>] UNUSED, added special or
// special-looking tokens CONTROL, other added tokens USER_DEFINED with U+2581 as ' ', added tokens
// past config.json's vocab_size left out) and gguf-py's SpecialVocab (Qwen3-Embedding's rule: a
// trailing template token other than eos_token becomes eos with add_eos, the old eos becomes eot;
// config.json ids fill only what is unset; add_*_token booleans win).
#include "verify/tokenizer/ref_vocab.hpp"

#include <gtest/gtest.h>

#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox::verify_ref {
namespace {

RefVocab vocab_of(const std::filesystem::path& dir, const std::string& tokenizer_json,
                  uint64_t vocab_size) {
    test::write_file(dir / "tokenizer.json", tokenizer_json);
    simdjson::dom::parser parser;
    const simdjson::padded_string text(tokenizer_json);
    return read_ref_vocab(parser.parse(text).value(), dir, vocab_size);
}

constexpr const char* kTokenizer = R"({
  "added_tokens": [
    {"id": 4, "content": "<|endoftext|>", "special": true},
    {"id": 5, "content": "<|im_end|>", "special": false},
    {"id": 6, "content": "\u2581hi\u2581there", "special": false},
    {"id": 9, "content": "<image_soft_token>", "special": true}],
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}]},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 3}, "merges": ["a b"]}})";

TEST(RefVocab, TokensTypesAndTheTrailingTemplateToken) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "tokenizer_config.json",
                     R"({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
                         "bos_token": null})");
    test::write_file(dir.path() / "config.json", R"({"bos_token_id": 0, "pad_token_id": 1})");
    const RefVocab v = vocab_of(dir.path(), kTokenizer, 8);
    EXPECT_EQ(v.tokens, (std::vector<std::string>{"a", "b", "[PAD2]", "ab", "<|endoftext|>",
                                                  "<|im_end|>", " hi there", "[PAD7]"}));
    EXPECT_EQ(v.token_types, (std::vector<int32_t>{1, 1, 5, 1, 3, 3, 4, 5}));
    EXPECT_EQ(v.eos_id, 4u);  // the template's trailing token
    EXPECT_EQ(v.eot_id, 5u);  // tokenizer_config's eos_token, moved
    EXPECT_TRUE(v.add_eos);
    EXPECT_FALSE(v.add_bos);
    EXPECT_EQ(v.pad_id, 4u);  // tokenizer_config wins over config.json's 1
    EXPECT_EQ(v.bos_id, 0u);  // only config.json names one
    EXPECT_EQ(v.unk_id, std::nullopt);
}

TEST(RefVocab, WithoutTokenizerConfigOnlyFlagsAndConfigIds) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "config.json", R"({"eos_token_id": 5, "unk_token_id": 99})");
    const RefVocab v = vocab_of(dir.path(), kTokenizer, 0);
    EXPECT_EQ(v.tokens.size(), 10u);  // one past the largest id, the added one included
    EXPECT_EQ(v.tokens[9], "<image_soft_token>");
    EXPECT_EQ(v.eos_id, 5u);            // the template's token names no id without the config
    EXPECT_EQ(v.unk_id, std::nullopt);  // 99 is past the vocabulary
    EXPECT_TRUE(v.add_eos);
}

TEST(RefVocab, AddFlagsFromTokenizerConfigWin) {
    test::ScratchDir dir;
    test::write_file(dir.path() / "tokenizer_config.json",
                     R"({"eos_token": {"content": "<|endoftext|>"}, "add_eos_token": false,
                         "add_bos_token": true, "bos_token": "<|im_end|>"})");
    const RefVocab v = vocab_of(dir.path(), kTokenizer, 8);
    // A dict eos_token is not the string the template names (Python compares them unequal): eot
    // takes the dict, whose content is <|endoftext|> again.
    EXPECT_EQ(v.eos_id, 4u);
    EXPECT_EQ(v.eot_id, 4u);
    EXPECT_FALSE(v.add_eos);
    EXPECT_TRUE(v.add_bos);
    EXPECT_EQ(v.bos_id, 5u);
}

TEST(RefVocab, HostileIdsFailNamingTheKey) {
    test::ScratchDir dir;
    const auto refusal = [&](const std::string& json_text, uint64_t vocab_size) -> std::string {
        try {
            vocab_of(dir.path(), json_text, vocab_size);
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(refusal(R"({"model": {"vocab": {"a": 4000000000}}})", 0).find("model.vocab"),
              std::string::npos);
    EXPECT_NE(refusal(R"({"model": {"vocab": {"a": 0, "b": 8}}})", 8).find("model.vocab"),
              std::string::npos);
    EXPECT_NE(refusal(R"({"model": {"vocab": {"a": 0, "b": 0}}})", 1).find("both"),
              std::string::npos);
    EXPECT_NE(
        refusal(R"({"model": {"vocab": {}}, "added_tokens": [{"id": -1, "content": "x"}]})", 0)
            .find("added_tokens[0].id"),
        std::string::npos);
}

}  // namespace
}  // namespace rebox::verify_ref
