// build_model_metadata: the exact key list, order and GGUF types for a Qwen3-Embedding-0.6B config,
// written out by hand from docs/gguf.md §3.1 (hparams), §4.3 (pooling) and §5 (tokenizer keys).
#include "arch/gguf_metadata.hpp"

#include <gtest/gtest.h>

#include "qwen3_06b_config.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

TokenizerVocab small_vocab() {
    TokenizerVocab v;
    v.pre = "qwen2";
    v.tokens = {"a", "b", "ab", "<|endoftext|>", "<|im_end|>"};
    v.token_types = {1, 1, 1, 3, 3};
    v.merges = {"a b"};
    v.eos_id = 3;
    v.eot_id = 4;
    v.pad_id = 3;
    v.add_eos = true;
    v.chat_template = "{{ x }}";
    return v;
}

struct ExpectedKV {
    const char* key;
    GgufType type;
    GgufScalar value;  // scalars only; arrays are checked separately
};

TEST(ModelMetadata, Qwen3EmbeddingKeysOrderTypesAndValues) {
    const ModelConfig config = test::qwen3_embedding_06b_config();
    const TokenizerVocab vocab = small_vocab();
    ModelMetadataInput input;
    input.config = &config;
    input.vocab = &vocab;
    input.pooling = PoolingType::LAST;
    input.name = "Qwen3-Embedding-0.6B";
    const std::vector<GgufKV> kvs = build_model_metadata(input);

    const GgufType U32 = GgufType::UINT32, F32 = GgufType::FLOAT32, STR = GgufType::STRING,
                   ARR = GgufType::ARRAY, BOOL = GgufType::BOOL;
    const std::vector<ExpectedKV> expected = {
        {"general.architecture", STR, std::string("qwen3")},
        {"general.name", STR, std::string("Qwen3-Embedding-0.6B")},
        {"general.file_type", U32, uint64_t{3}},  // MOSTLY_Q4_1 (llama_ftype, not the ggml type id)
        {"general.quantization_version", U32, uint64_t{2}},
        {"qwen3.context_length", U32, uint64_t{32768}},
        {"qwen3.embedding_length", U32, uint64_t{1024}},
        {"qwen3.block_count", U32, uint64_t{28}},
        {"qwen3.feed_forward_length", U32, uint64_t{3072}},
        {"qwen3.attention.head_count", U32, uint64_t{16}},
        {"qwen3.attention.head_count_kv", U32, uint64_t{8}},
        {"qwen3.rope.freq_base", F32, 1000000.0},
        {"qwen3.attention.layer_norm_rms_epsilon", F32, static_cast<double>(1e-6f)},
        {"qwen3.attention.key_length", U32, uint64_t{128}},
        {"qwen3.attention.value_length", U32, uint64_t{128}},
        {"qwen3.rope.dimension_count", U32, uint64_t{128}},
        {"qwen3.pooling_type", U32, uint64_t{3}},  // LAST
        {"tokenizer.ggml.model", STR, std::string("gpt2")},
        {"tokenizer.ggml.pre", STR, std::string("qwen2")},
        {"tokenizer.ggml.tokens", ARR, {}},
        {"tokenizer.ggml.token_type", ARR, {}},
        {"tokenizer.ggml.merges", ARR, {}},
        {"tokenizer.ggml.eos_token_id", U32, uint64_t{3}},
        {"tokenizer.ggml.eot_token_id", U32, uint64_t{4}},
        {"tokenizer.ggml.padding_token_id", U32, uint64_t{3}},
        {"tokenizer.ggml.add_bos_token", BOOL, false},
        {"tokenizer.ggml.add_eos_token", BOOL, true},
        {"tokenizer.chat_template", STR, std::string("{{ x }}")},
    };
    ASSERT_EQ(kvs.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(kvs[i].key, expected[i].key) << i;
        EXPECT_EQ(kvs[i].value.type, expected[i].type) << expected[i].key;
        if (expected[i].type != ARR) {
            EXPECT_EQ(kvs[i].value.scalar, expected[i].value) << expected[i].key;
        }
    }

    const GgufValue& tokens = kvs[18].value;
    EXPECT_EQ(tokens.elem_type, GgufType::STRING);
    EXPECT_EQ(tokens.array,
              (std::vector<GgufScalar>{std::string("a"), std::string("b"), std::string("ab"),
                                       std::string("<|endoftext|>"), std::string("<|im_end|>")}));
    const GgufValue& types = kvs[19].value;
    EXPECT_EQ(types.elem_type, GgufType::INT32);  // read by llama.cpp as raw int32
    EXPECT_EQ(types.array, (std::vector<GgufScalar>{int64_t{1}, int64_t{1}, int64_t{1}, int64_t{3},
                                                    int64_t{3}}));
    const GgufValue& merges = kvs[20].value;
    EXPECT_EQ(merges.elem_type, GgufType::STRING);
    EXPECT_EQ(merges.array, std::vector<GgufScalar>{std::string("a b")});
}

TEST(ModelMetadata, LlamaAddsVocabSizeAndNoTokenizerWithoutVocab) {
    ModelConfig config = test::qwen3_embedding_06b_config();
    config.model_type = "llama";
    ModelMetadataInput input;
    input.config = &config;
    const std::vector<GgufKV> kvs = build_model_metadata(input);
    std::vector<std::string> keys;
    for (const GgufKV& kv : kvs) keys.push_back(kv.key);
    const std::vector<std::string> expected = {"general.architecture",
                                               "general.file_type",
                                               "general.quantization_version",
                                               "llama.context_length",
                                               "llama.embedding_length",
                                               "llama.block_count",
                                               "llama.feed_forward_length",
                                               "llama.attention.head_count",
                                               "llama.attention.head_count_kv",
                                               "llama.rope.freq_base",
                                               "llama.attention.layer_norm_rms_epsilon",
                                               "llama.attention.key_length",
                                               "llama.attention.value_length",
                                               "llama.rope.dimension_count",
                                               "llama.vocab_size"};
    EXPECT_EQ(keys, expected);
    EXPECT_EQ(kvs.back().value.scalar, GgufScalar(uint64_t{151669}));
}

TEST(ModelMetadata, UnsupportedArchitectureIsABlocker) {
    ModelConfig config = test::qwen3_embedding_06b_config();
    config.model_type = "deepseek_v4";
    ModelMetadataInput input;
    input.config = &config;
    try {
        build_model_metadata(input);
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::blocker);
        EXPECT_NE(std::string(e.what()).find("deepseek_v4"), std::string::npos);
    }
}

}  // namespace
}  // namespace rebox
