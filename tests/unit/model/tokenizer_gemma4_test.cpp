// read_tokenizer with the gemma4 tokenizer model (Gemma4Model.set_vocab through gguf-py's
// LlamaHfVocab and SpecialVocab) on a small hand-written Gemma-shaped tokenizer.json: the tokens in
// id order with their raw text, score -1000 for every token, the token types worked by hand
// (BYTE for <0xHH>, CONTROL for the tokens tokenizer_config.json names, USER_DEFINED for the
// channel / escape tokens and for added tokens past the model's vocabulary, NORMAL else), the
// merges, the special ids, add_bos forced true, add_space_prefix false; the tokenizer KVs in the
// converter's order (no tokenizer.ggml.pre); and what is refused.
#include <gtest/gtest.h>

#include "arch/gguf_metadata.hpp"
#include "model/tokenizer_vocab.hpp"
#include "qwen3_06b_config.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

#define G4SP "\xE2\x96\x81"  // U+2581

struct G4TokParts {
    std::string vocab = R"({"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3, "<mask>": 4,
        "<|turn>": 5, "<|channel>": 6, "<|\"|>": 7, "<0x0A>": 8, ")" G4SP R"(": 9, "a": 10,
        "b": 11, ")" G4SP R"(a": 12, "ab": 13})";
    std::string added = R"([{"id": 0, "content": "<pad>", "special": true},
        {"id": 1, "content": "<eos>", "special": true},
        {"id": 2, "content": "<bos>", "special": true},
        {"id": 3, "content": "<unk>", "special": true},
        {"id": 4, "content": "<mask>", "special": false},
        {"id": 5, "content": "<|turn>", "special": true},
        {"id": 6, "content": "<|channel>", "special": true},
        {"id": 7, "content": "<|\"|>", "special": true},
        {"id": 14, "content": "<x)" G4SP R"(y>", "special": false}])";
    std::string byte_fallback = "true";
    std::string decoder = R"({"type": "Sequence", "decoders": [{"type": "ByteFallback"}]})";
    std::string config = R"({"bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>",
        "pad_token": "<pad>", "mask_token": {"content": "<mask>"}, "add_bos_token": false,
        "extra_special_tokens": {"sot_token": "<|turn>", "soc_token": "<|channel>",
                                 "escape_token": "<|\"|>"},
        "chat_template": "{{ bos_token }}"})";
};

std::string g4tok_json(const G4TokParts& p) {
    return R"({"version": "1.0", "added_tokens": )" + p.added +
           R"(, "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": ")" G4SP
           R"("}, "pre_tokenizer": null, "post_processor": null, "decoder": )" +
           p.decoder + R"(, "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": )" +
           p.byte_fallback + R"(, "vocab": )" + p.vocab +
           R"(, "merges": [[")" G4SP R"(", "a"], ["a", "b"]]}})";
}

TokenizerVocab g4tok_read(const G4TokParts& parts, bool with_json = true) {
    test::ScratchDir dir;
    if (with_json) dir.write("tokenizer.json", g4tok_json(parts));
    dir.write("tokenizer.model", "not read");
    dir.write("tokenizer_config.json", parts.config);
    TokenizerOptions options;
    options.vocab_size = 15;
    options.model = "gemma4";
    return read_tokenizer(dir.path(), options);
}

Error g4tok_error(const G4TokParts& parts, bool with_json = true) {
    try {
        g4tok_read(parts, with_json);
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "no error";
    return Error(ExitClass::input, "");
}

TEST(ModelTokenizerGemma4, TokensScoresTypesMergesAndIds) {
    const TokenizerVocab v = g4tok_read({});
    EXPECT_EQ(v.model, "gemma4");
    EXPECT_EQ(v.pre, "");
    const std::vector<std::string> tokens = {
        "<pad>",  "<eos>", "<bos>", "<unk>", "<mask>", "<|turn>", "<|channel>",  "<|\"|>",
        "<0x0A>", G4SP,    "a",     "b",     G4SP "a", "ab",      "<x" G4SP "y>"};  // raw text
    EXPECT_EQ(v.tokens, tokens);
    // CONTROL 3 for the named ones (<mask> too, though not "special" in tokenizer.json),
    // USER_DEFINED 4 for <|channel> / <|"|> (named, then overridden) and for id 14 (past the 14
    // model.vocab entries, not named), BYTE 6, NORMAL 1.
    const std::vector<int32_t> types = {3, 3, 3, 3, 3, 3, 4, 4, 6, 1, 1, 1, 1, 1, 4};
    EXPECT_EQ(v.token_types, types);
    EXPECT_EQ(v.scores, std::vector<float>(15, -1000.0f));
    EXPECT_EQ(v.merges, (std::vector<std::string>{G4SP " a", "a b"}));
    EXPECT_EQ(v.bos_id, 2u);
    EXPECT_EQ(v.eos_id, 1u);
    EXPECT_EQ(v.unk_id, 3u);
    EXPECT_EQ(v.pad_id, 0u);
    EXPECT_EQ(v.mask_id, 4u);
    EXPECT_TRUE(v.add_bos);  // Gemma4Model.set_vocab overrides tokenizer_config's false
    EXPECT_EQ(v.add_space_prefix, false);
    ASSERT_TRUE(v.chat_template.has_value());
    EXPECT_EQ(*v.chat_template, "{{ bos_token }}");
}

// google/gemma-4's own tokenizer_config.json names its model tokens at the top level (sot_token,
// think_token, ...; extra_special_tokens is a list): each is a special token, CONTROL unless shown,
// as the converter's output on that tokenizer (llama.cpp's models/ggml-vocab-gemma-4.gguf) has
// them. Booleans such as add_bos_token end in "_token" but name no token.
TEST(ModelTokenizerGemma4, TopLevelModelTokensAreSpecial) {
    G4TokParts parts;
    parts.config = R"({"bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>",
        "pad_token": "<pad>", "add_bos_token": true, "sot_token": "<|turn>",
        "soc_token": {"content": "<|channel>"}, "image_token": null, "extra_special_tokens": []})";
    const TokenizerVocab v = g4tok_read(parts);
    // <pad> <eos> <bos> <unk> CONTROL 3; <mask> named nowhere now: NORMAL 1; <|turn> (sot_token)
    // CONTROL; <|channel> (soc_token) named but shown: USER_DEFINED 4; <|"|> shown: 4.
    const std::vector<int32_t> types = {3, 3, 3, 3, 1, 3, 4, 4, 6, 1, 1, 1, 1, 1, 4};
    EXPECT_EQ(v.token_types, types);
    G4TokParts missing;  // a top-level model token the vocabulary lacks
    missing.config = R"({"bos_token": "<bos>", "eot_token": "<turn|>"})";
    const Error e = g4tok_error(missing);
    EXPECT_EQ(e.exit_class(), ExitClass::blocker);
    EXPECT_EQ(e.file(), "tokenizer_config.json");
    EXPECT_EQ(e.field(), "eot_token");
}

TEST(ModelTokenizerGemma4, KvsInTheConvertersOrder) {
    const TokenizerVocab vocab = g4tok_read({});
    const ModelConfig config = test::qwen3_embedding_06b_config();
    ModelMetadataInput input;
    input.config = &config;
    input.vocab = &vocab;
    std::vector<std::string> keys;
    for (const GgufKV& kv : build_model_metadata(input))
        if (kv.key.starts_with("tokenizer.")) keys.push_back(kv.key.substr(10));
    // set_vocab: model, tokens, scores, types; SpecialVocab: merges, ids, add flags, template;
    // then add_space_prefix (add_bos_token rewritten in place).
    const std::vector<std::string> want = {
        "ggml.model",         "ggml.tokens",           "ggml.scores",
        "ggml.token_type",    "ggml.merges",           "ggml.bos_token_id",
        "ggml.eos_token_id",  "ggml.unknown_token_id", "ggml.padding_token_id",
        "ggml.mask_token_id", "ggml.add_bos_token",    "ggml.add_eos_token",
        "chat_template",      "ggml.add_space_prefix"};
    EXPECT_EQ(keys, want);
}

TEST(ModelTokenizerGemma4, Refusals) {
    G4TokParts no_fallback;
    no_fallback.byte_fallback = "false";
    G4TokParts other_decoder;
    other_decoder.decoder = R"({"type": "ByteLevel"})";
    for (const G4TokParts& parts : {no_fallback, other_decoder}) {
        const Error e = g4tok_error(parts);
        EXPECT_EQ(e.exit_class(), ExitClass::blocker);
        EXPECT_EQ(e.file(), "tokenizer.json");
        EXPECT_NE(std::string(e.what()).find("LlamaHfVocab"), std::string::npos) << e.what();
    }
    G4TokParts hole;  // id 15 used, 14 missing
    hole.added = R"([{"id": 15, "content": "<z>", "special": false}])";
    hole.config = "{}";
    EXPECT_NE(std::string(g4tok_error(hole).what()).find("no token with id 14"), std::string::npos);
    G4TokParts unknown_name;
    unknown_name.config = R"({"eos_token": "<end_of_turn>"})";
    const Error named = g4tok_error(unknown_name);
    EXPECT_EQ(named.exit_class(), ExitClass::blocker);
    EXPECT_EQ(named.file(), "tokenizer_config.json");
    EXPECT_EQ(named.field(), "eos_token");
    // Only tokenizer.model: LlamaHfVocab reads tokenizer.json.
    const Error missing = g4tok_error({}, false);
    EXPECT_EQ(missing.exit_class(), ExitClass::blocker);
    EXPECT_EQ(missing.file(), "tokenizer.json");
}

}  // namespace
}  // namespace rebox
