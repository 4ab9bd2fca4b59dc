// read_tokenizer on small hand-written Unigram tokenizer.json files (XLM-R's layout), values worked
// by hand from llama.cpp's converter (BertModel._xlmroberta_set_vocab) and gguf-py's SpecialVocab:
// pieces and scores in id order padded with [PAD<i>] / -10000 / UNUSED, UNKNOWN / CONTROL /
// USER_DEFINED / NORMAL types, add_space_prefix, remove_extra_whitespaces, the Precompiled
// charsmap (top level or in a Sequence), the RobertaProcessing and TemplateProcessing add flags,
// and the refusals.
#include "model/tokenizer_unigram.hpp"

#include <gtest/gtest.h>

#include "model/tokenizer_vocab.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

// <s> <pad> </s> <unk> ▁a b <mask>, and a user token "<x>" at 7.
std::string unigram_json(const std::string& normalizer, const std::string& post) {
    return R"({"added_tokens": [
        {"id": 0, "content": "<s>", "special": true}, {"id": 1, "content": "<pad>", "special": true},
        {"id": 2, "content": "</s>", "special": true}, {"id": 3, "content": "<unk>", "special": true},
        {"id": 6, "content": "<mask>", "special": true}, {"id": 7, "content": "<x>", "special": false}],
        "normalizer": )" +
           normalizer + R"(,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"},
        "post_processor": )" +
           post + R"(,
        "model": {"type": "Unigram", "unk_id": 3, "vocab": [["<s>", 0.0], ["<pad>", 0.0],
            ["</s>", 0.0], ["<unk>", 0.0], ["\u2581a", -1.5], ["b", -2.25], ["<mask>", 0.0],
            ["<x>", 0.0]]}})";
}

constexpr const char* kConfig = R"({"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>",
    "cls_token": "<s>", "unk_token": "<unk>", "pad_token": "<pad>",
    "mask_token": {"content": "<mask>", "lstrip": true}, "clean_up_tokenization_spaces": true})";

constexpr const char* kRoberta =
    R"({"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]})";

TEST(ModelTokenizerUnigram, XlmRobertaVocabulary) {
    test::ScratchDir dir;
    // "AQID/w==" is base64 of the bytes 01 02 03 ff.
    dir.write(
        "tokenizer.json",
        unigram_json(R"({"type": "Precompiled", "precompiled_charsmap": "AQID/w=="})", kRoberta));
    dir.write("tokenizer_config.json", kConfig);
    TokenizerOptions options;
    options.vocab_size = 10;
    const TokenizerVocab v = read_tokenizer(dir.path(), options);
    EXPECT_EQ(v.model, "t5");
    EXPECT_EQ(v.pre, "default");
    EXPECT_EQ(v.tokens, (std::vector<std::string>{"<s>", "<pad>", "</s>", "<unk>", "\u2581a", "b",
                                                  "<mask>", "<x>", "[PAD8]", "[PAD9]"}));
    EXPECT_EQ(v.scores,
              (std::vector<float>{0, 0, 0, 0, -1.5f, -2.25f, 0, 0, -10000.0f, -10000.0f}));
    EXPECT_EQ(v.token_types, (std::vector<int32_t>{3, 3, 3, 2, 1, 1, 3, 4, 5, 5}));
    EXPECT_EQ(v.precompiled_charsmap, (std::vector<uint8_t>{1, 2, 3, 255}));
    EXPECT_EQ(v.add_space_prefix, true);
    EXPECT_EQ(v.remove_extra_whitespaces, true);
    EXPECT_EQ(v.bos_id, 0u);
    EXPECT_EQ(v.eos_id, 2u);
    EXPECT_EQ(v.unk_id, 3u);
    EXPECT_EQ(v.sep_id, 2u);
    EXPECT_EQ(v.pad_id, 1u);
    EXPECT_EQ(v.mask_id, 6u);
    EXPECT_TRUE(v.add_bos);
    EXPECT_TRUE(v.add_eos);
    EXPECT_EQ(v.add_sep, true);
}

// transformers' XLMRobertaConverter: the charsmap inside a Sequence, the "<s> $A </s> </s> $B </s>"
// template (gguf-py: add_sep from the second separator), no clean_up flag (false), prepend_scheme
// "never" (no space prefix).
TEST(ModelTokenizerUnigram, SequenceNormalizerAndTemplate) {
    const std::string post = R"({"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}, {"SpecialToken": {"id": "</s>"}}],
        "pair": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}, {"SpecialToken": {"id": "</s>"}},
                 {"SpecialToken": {"id": "</s>"}}, {"Sequence": {"id": "B"}}, {"SpecialToken": {"id": "</s>"}}]})";
    std::string json = unigram_json(
        R"({"type": "Sequence", "normalizers": [{"type": "Precompiled", "precompiled_charsmap": "AAE="},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]})",
        post);
    json.replace(json.find("\"always\""), 8, "\"never\"");
    std::string config = kConfig;
    const std::string clean = ", \"clean_up_tokenization_spaces\": true";
    config.replace(config.find(clean), clean.size(), "");
    test::ScratchDir dir;
    dir.write("tokenizer.json", json);
    dir.write("tokenizer_config.json", config);
    const TokenizerVocab v = read_tokenizer(dir.path(), {});
    EXPECT_EQ(v.tokens.size(), 8u);
    EXPECT_EQ(v.precompiled_charsmap, (std::vector<uint8_t>{0, 1}));
    EXPECT_EQ(v.add_space_prefix, false);
    EXPECT_EQ(v.remove_extra_whitespaces, false);
    EXPECT_TRUE(v.add_bos);
    EXPECT_TRUE(v.add_eos);
    EXPECT_EQ(v.add_sep, true);
}

TEST(ModelTokenizerUnigram, Refusals) {
    test::ScratchDir dir;
    dir.write("tokenizer.json", unigram_json("null", kRoberta));
    dir.write("tokenizer_config.json", kConfig);
    TokenizerOptions small;
    small.vocab_size = 7;  // 8 pieces: more than token_embd's rows
    try {
        read_tokenizer(dir.path(), small);
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::blocker);
        EXPECT_NE(std::string(e.what()).find("8 pieces, beyond the vocabulary"), std::string::npos);
    }
    std::string duplicate = unigram_json("null", kRoberta);
    duplicate.replace(duplicate.find(R"(["b", -2.25])"), 12, R"(["<x>", -2.25])");
    dir.write("tokenizer.json", duplicate);
    EXPECT_THROW(read_tokenizer(dir.path(), {}), Error);
    std::string malformed = unigram_json("null", kRoberta);
    malformed.replace(malformed.find(R"(["b", -2.25])"), 12, R"(["b"])");
    dir.write("tokenizer.json", malformed);
    EXPECT_THROW(read_tokenizer(dir.path(), {}), Error);
}

TEST(ModelTokenizerUnigram, Base64) {
    EXPECT_EQ(detail::decode_base64(""), std::vector<uint8_t>{});
    EXPECT_EQ(detail::decode_base64("TWFu"), (std::vector<uint8_t>{'M', 'a', 'n'}));
    EXPECT_EQ(detail::decode_base64("TWE="), (std::vector<uint8_t>{'M', 'a'}));
    EXPECT_EQ(detail::decode_base64("TQ=="), (std::vector<uint8_t>{'M'}));
    EXPECT_FALSE(detail::decode_base64("TQ=").has_value());
    EXPECT_FALSE(detail::decode_base64("T=Q=").has_value());
    EXPECT_FALSE(detail::decode_base64("TW!u").has_value());
}

}  // namespace
}  // namespace rebox
