// read_tokenizer on small hand-written SentencePiece-style BPE tokenizer.json files (byte_fallback,
// U+2581 for spaces): the "llama" model, scores worked out by hand from the merge ranks, token
// types (BYTE, UNKNOWN, CONTROL, USER_DEFINED), add_space_prefix from the normalizer or the
// Metaspace pre-tokenizer, added tokens beyond vocab_size left out, and what is refused; plus the
// KVs build_model_metadata writes for such a vocabulary.
#include <gtest/gtest.h>

#include "arch/gguf_metadata.hpp"
#include "model/tokenizer_vocab.hpp"
#include "qwen3_06b_config.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

// U+2581, SentencePiece's space.
#define SP "\xE2\x96\x81"

struct SpmParts {
    std::string vocab =
        R"({"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "<0xE2>": 4, ")" SP
        R"(": 5, "a": 6, "b": 7, "ab": 8, ")" SP R"(a": 9, ")" SP R"(ab": 10, "ba": 11})";
    // Rank 0 makes "ab", 1 "▁a", 2 and 3 both "▁ab" (the first one counts); "ba" has no merge.
    std::string merges = R"(["a b", ")" SP R"( a", ")" SP R"(a b", ")" SP R"( ab"])";
    std::string added = R"([{"id": 0, "content": "<unk>", "special": true},
                            {"id": 1, "content": "<s>", "special": true},
                            {"id": 2, "content": "</s>", "special": true},
                            {"id": 12, "content": "<tool)" SP R"(x>", "special": false}])";
    std::string normalizer = R"({"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": ")" SP R"("},
        {"type": "Replace", "pattern": {"String": " "}, "content": ")" SP R"("}]})";
    std::string pre_tokenizer = "null";
    std::string byte_fallback = "true";
};

std::string tokenizer_json(const SpmParts& p) {
    return R"({"version": "1.0", "added_tokens": )" + p.added + R"(, "normalizer": )" +
           p.normalizer + R"(, "pre_tokenizer": )" + p.pre_tokenizer +
           R"(, "post_processor": null, "model": {"type": "BPE", "unk_token": "<unk>",
           "byte_fallback": )" +
           p.byte_fallback + R"(, "vocab": )" + p.vocab + R"(, "merges": )" + p.merges + "}}";
}

TokenizerVocab read_spm(const SpmParts& parts, uint32_t vocab_size = 0,
                        const std::string& tokenizer_config = "") {
    test::ScratchDir dir;
    dir.write("tokenizer.json", tokenizer_json(parts));
    if (!tokenizer_config.empty()) dir.write("tokenizer_config.json", tokenizer_config);
    TokenizerOptions options;
    options.vocab_size = vocab_size;
    return read_tokenizer(dir.path(), options);
}

Error spm_error(const SpmParts& parts) {
    try {
        read_spm(parts);
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "no error";
    return Error(ExitClass::input, "");
}

TEST(ModelTokenizerSpm, ModelTokensAndTypes) {
    const TokenizerVocab v = read_spm({}, 14);
    EXPECT_EQ(v.model, "llama");
    EXPECT_EQ(v.pre, "default");
    EXPECT_TRUE(v.merges.empty());  // llama.cpp's SPM tokenizer reads scores, not merges
    const std::vector<std::string> tokens = {
        "<unk>", "<s>",  "</s>",  "<0x0A>", "<0xE2>",   SP,       "a", "b",
        "ab",    SP "a", SP "ab", "ba",     "<tool x>", "[PAD13]"};  // user-defined: ▁ -> ' '
    EXPECT_EQ(v.tokens, tokens);
    // UNKNOWN 2, CONTROL 3, BYTE 6, NORMAL 1, USER_DEFINED 4, UNUSED 5.
    const std::vector<int32_t> types = {2, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 4, 5};
    EXPECT_EQ(v.token_types, types);
    EXPECT_EQ(v.unk_id, 0u);
}

TEST(ModelTokenizerSpm, ScoresFollowMergeRanks) {
    const TokenizerVocab v = read_spm({});
    ASSERT_EQ(v.scores.size(), 13u);
    // 4 merges: the pieces they make score -rank; everything else -(4 + 1), below every merge.
    const float none = -5.0f;
    const std::vector<float> scores = {none, none, none,  none,  none, none, none,
                                       none, 0.0f, -1.0f, -2.0f, none, none};
    EXPECT_EQ(v.scores, scores);

    // ["a", "b"] pairs give the same scores as "a b" strings.
    SpmParts pairs;
    pairs.merges = R"([["a", "b"], [")" SP R"(", "a"], [")" SP R"(a", "b"], [")" SP R"(", "ab"]])";
    EXPECT_EQ(read_spm(pairs).scores, scores);

    // Reordering the merges reorders the scores: "▁a" first, then "▁ab", then "ab".
    SpmParts reordered;
    reordered.merges = R"([")" SP R"( a", ")" SP R"( ab", "a b"])";
    const TokenizerVocab r = read_spm(reordered);
    EXPECT_EQ(r.scores[9], 0.0f);
    EXPECT_EQ(r.scores[10], -1.0f);
    EXPECT_EQ(r.scores[8], -2.0f);
    EXPECT_EQ(r.scores[11], -4.0f);  // 3 merges: -(3 + 1)
}

TEST(ModelTokenizerSpm, AddSpacePrefixFromNormalizerOrMetaspace) {
    EXPECT_EQ(read_spm({}).add_space_prefix, true);  // Prepend "▁" + Replace " " -> "▁"

    SpmParts replace_only;  // Gemma: no prefix, then a Split at " " that finds none
    replace_only.normalizer =
        R"({"type": "Replace", "pattern": {"String": " "}, "content": ")" SP R"("})";
    replace_only.pre_tokenizer =
        R"({"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious"})";
    EXPECT_EQ(read_spm(replace_only).add_space_prefix, false);

    SpmParts metaspace;
    metaspace.normalizer = "null";
    for (const auto& [scheme, prefix] :
         std::vector<std::pair<std::string, bool>>{{R"("prepend_scheme": "always")", true},
                                                   {R"("prepend_scheme": "first")", true},
                                                   {R"("prepend_scheme": "never")", false},
                                                   {R"("add_prefix_space": true)", true},
                                                   {R"("add_prefix_space": false)", false}}) {
        metaspace.pre_tokenizer =
            R"({"type": "Metaspace", "replacement": ")" SP R"(", "split": false, )" + scheme + "}";
        EXPECT_EQ(read_spm(metaspace).add_space_prefix, prefix) << scheme;
    }
}

TEST(ModelTokenizerSpm, WhatLlamaCppCannotFollowIsABlocker) {
    SpmParts nfkc;
    nfkc.normalizer = R"({"type": "NFKC"})";
    Error e = spm_error(nfkc);
    EXPECT_EQ(e.exit_class(), ExitClass::blocker);
    EXPECT_NE(std::string(e.what()).find("normalizer: 'NFKC' is not supported"), std::string::npos)
        << e.what();

    SpmParts no_escape;  // spaces stay spaces: not what llama.cpp's SPM tokenizer does
    no_escape.normalizer = "null";
    e = spm_error(no_escape);
    EXPECT_EQ(e.exit_class(), ExitClass::blocker);
    EXPECT_NE(std::string(e.what()).find("spaces are not replaced by U+2581"), std::string::npos)
        << e.what();

    SpmParts byte_level;
    byte_level.pre_tokenizer = R"({"type": "ByteLevel"})";
    EXPECT_EQ(spm_error(byte_level).exit_class(), ExitClass::blocker);

    SpmParts bad_merge;
    bad_merge.merges = R"(["ab"])";
    EXPECT_EQ(spm_error(bad_merge).exit_class(), ExitClass::input);

    // Without byte_fallback the file is byte-level BPE: the gpt2 path, which needs a Split regex.
    SpmParts gpt2;
    gpt2.byte_fallback = "false";
    EXPECT_EQ(spm_error(gpt2).exit_class(), ExitClass::blocker);
}

TEST(ModelTokenizerSpm, AddedTokensBeyondVocabSizeAreLeftOut) {
    // vocab_size 12: the added <tool▁x> (id 12) is dropped and listed, no id shifts.
    const TokenizerVocab v = read_spm({}, 12);
    ASSERT_EQ(v.tokens.size(), 12u);
    EXPECT_EQ(v.tokens[11], "ba");
    EXPECT_EQ(v.dropped_added_tokens, std::vector<std::string>{"<tool" SP "x> (id 12)"});
    // Without a vocab_size the table covers every id.
    EXPECT_EQ(read_spm({}).tokens.size(), 13u);
    EXPECT_TRUE(read_spm({}).dropped_added_tokens.empty());
    // A model.vocab id beyond vocab_size is still refused.
    test::ScratchDir dir;
    dir.write("tokenizer.json", tokenizer_json({}));
    TokenizerOptions options;
    options.vocab_size = 11;
    EXPECT_THROW(read_tokenizer(dir.path(), options), Error);
}

TEST(ModelTokenizerSpm, SpecialIdsFromTokenizerConfig) {
    const TokenizerVocab v =
        read_spm({}, 0,
                 R"({"add_bos_token": true, "add_eos_token": false, "bos_token": "<s>",
            "eos_token": "</s>", "unk_token": "<unk>"})");
    EXPECT_EQ(v.bos_id, 1u);
    EXPECT_EQ(v.eos_id, 2u);
    EXPECT_EQ(v.unk_id, 0u);
    EXPECT_TRUE(v.add_bos);
    EXPECT_FALSE(v.add_eos);
}

TEST(ModelTokenizerSpm, MetadataWritesScoresAndSpacePrefixWithoutMerges) {
    const ModelConfig config = test::qwen3_embedding_06b_config();
    const TokenizerVocab vocab = read_spm({});
    ModelMetadataInput input;
    input.config = &config;
    input.vocab = &vocab;
    const std::vector<GgufKV> kvs = build_model_metadata(input);
    std::vector<std::string> keys;
    const GgufKV* scores = nullptr;
    const GgufKV* prefix = nullptr;
    for (const GgufKV& kv : kvs) {
        if (kv.key.starts_with("tokenizer.")) keys.push_back(kv.key);
        if (kv.key == "tokenizer.ggml.scores") scores = &kv;
        if (kv.key == "tokenizer.ggml.add_space_prefix") prefix = &kv;
    }
    const std::vector<std::string> expected = {
        "tokenizer.ggml.model",           "tokenizer.ggml.pre",
        "tokenizer.ggml.tokens",          "tokenizer.ggml.scores",
        "tokenizer.ggml.token_type",      "tokenizer.ggml.unknown_token_id",
        "tokenizer.ggml.add_bos_token",   "tokenizer.ggml.add_eos_token",
        "tokenizer.ggml.add_space_prefix"};
    EXPECT_EQ(keys, expected);
    ASSERT_NE(scores, nullptr);
    EXPECT_EQ(scores->value.elem_type, GgufType::FLOAT32);
    ASSERT_EQ(scores->value.array.size(), 13u);
    EXPECT_EQ(scores->value.array[9], GgufScalar(-1.0));
    ASSERT_NE(prefix, nullptr);
    EXPECT_EQ(prefix->value.type, GgufType::BOOL);
    EXPECT_EQ(prefix->value.scalar, GgufScalar(true));
}

}  // namespace
}  // namespace rebox
