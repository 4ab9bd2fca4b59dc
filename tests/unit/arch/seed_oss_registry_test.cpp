// seed_oss in the registry against hand-written tables from llama.cpp's seed_oss loader
// (src/models/seed-oss.cpp) and converter (conversion/olmo.py SeedOssModel, a plain TextModel;
// gguf-py's tensor list for SEED_OSS): names both ways (post_attention_layernorm is
// post_attention_norm, there is no ffn_norm), ne from a hand-written config.json with head_dim
// apart from hidden/heads, the required tensors, the KVs in TextModel's order with their values,
// SeedOssConfig's head_dim default, and what the loader refuses (an o_proj bias, q/k norms).
#include <gtest/gtest.h>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"

namespace rebox::arch {
namespace {

// Seed-OSS-36B's config.json keys, scaled down: hidden 64, 4 heads / 2 kv heads of head_dim 32
// (q width 128 != hidden), ffn 96, vocab 100, untied.
ModelConfig seed_config(bool with_head_dim = true) {
    std::string text = R"({"architectures": ["SeedOssForCausalLM"], "attention_bias": true,
        "attention_out_bias": false, "hidden_size": 64, "intermediate_size": 96,
        "max_position_embeddings": 524288, "model_type": "seed_oss", "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
        "rope_scaling": {"rope_type": "default"}, "rope_theta": 10000000.0,
        "tie_word_embeddings": false, "vocab_size": 100)";
    if (with_head_dim) text += R"(, "head_dim": 32)";
    return parse_model_config(nlohmann::json::parse(text + "}"));
}

TEST(SeedOssRegistry, NamesBothWays) {
    const Architecture* found = find_architecture("seed_oss");
    ASSERT_NE(found, nullptr);
    const Architecture& a = *found;
    EXPECT_EQ(a.gguf_arch, "seed_oss");
    const std::pair<const char*, const char*> rows[] = {
        {"model.embed_tokens.weight", "token_embd.weight"},
        {"model.layers.1.input_layernorm.weight", "blk.1.attn_norm.weight"},
        {"model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight"},
        {"model.layers.1.self_attn.q_proj.bias", "blk.1.attn_q.bias"},
        {"model.layers.1.self_attn.k_proj.bias", "blk.1.attn_k.bias"},
        {"model.layers.1.self_attn.v_proj.bias", "blk.1.attn_v.bias"},
        {"model.layers.1.self_attn.o_proj.weight", "blk.1.attn_output.weight"},
        {"model.layers.1.post_attention_layernorm.weight", "blk.1.post_attention_norm.weight"},
        {"model.layers.1.mlp.gate_proj.weight", "blk.1.ffn_gate.weight"},
        {"model.layers.1.mlp.up_proj.weight", "blk.1.ffn_up.weight"},
        {"model.layers.1.mlp.down_proj.weight", "blk.1.ffn_down.weight"},
        {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(ref->spec->rows, RowTransform::none) << hf;  // NEOX rope: nothing moves
        const auto back = resolve_gguf(a, gguf);
        ASSERT_TRUE(back.has_value()) << gguf;
        EXPECT_EQ(back->hf_name, strip_model_prefix(hf));
    }
    // The loader creates no o_proj bias, no q/k norms and no ffn_norm.
    for (const char* refused :
         {"model.layers.0.self_attn.o_proj.bias", "model.layers.0.self_attn.q_norm.weight",
          "model.layers.0.mlp.down_proj.bias"})
        EXPECT_FALSE(resolve_hf(a, refused).has_value()) << refused;
    EXPECT_FALSE(resolve_gguf(a, "blk.0.ffn_norm.weight").has_value());
}

TEST(SeedOssRegistry, ShapesFromConfig) {
    const Architecture& a = *find_architecture("seed_oss");
    const ModelConfig c = seed_config();
    using Ne = std::vector<int64_t>;
    // llama.cpp: wq {n_embd, n_head * head_dim} = {64, 4 * 32}; wk/wv {64, 2 * 32}; wo {128, 64}.
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_q.weight"), (Ne{64, 128}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_q.bias"), (Ne{128}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_k.weight"), (Ne{64, 64}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_v.bias"), (Ne{64}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_output.weight"), (Ne{128, 64}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.post_attention_norm.weight"), (Ne{64}));
    EXPECT_EQ(expected_ne(a, c, "blk.0.ffn_down.weight"), (Ne{96, 64}));
    EXPECT_EQ(expected_ne(a, c, "output.weight"), (Ne{64, 100}));
}

TEST(SeedOssRegistry, RequiredTensorsAndOrder) {
    const Architecture& a = *find_architecture("seed_oss");
    ModelConfig c = seed_config();
    c.num_hidden_layers = 1;
    // Biases are optional (attention_bias); output is required unless tied.
    const std::vector<std::string> untied = {"token_embd.weight",
                                             "blk.0.attn_norm.weight",
                                             "blk.0.attn_q.weight",
                                             "blk.0.attn_k.weight",
                                             "blk.0.attn_v.weight",
                                             "blk.0.attn_output.weight",
                                             "blk.0.post_attention_norm.weight",
                                             "blk.0.ffn_gate.weight",
                                             "blk.0.ffn_up.weight",
                                             "blk.0.ffn_down.weight",
                                             "output_norm.weight",
                                             "output.weight"};
    EXPECT_EQ(required_tensors(a, c), untied);
    c.tie_word_embeddings = true;
    EXPECT_EQ(required_tensors(a, c), std::vector<std::string>(untied.begin(), untied.end() - 1));
    EXPECT_LT(output_rank(a, "blk.0.attn_q.weight"), output_rank(a, "blk.0.attn_q.bias"));
    EXPECT_LT(output_rank(a, "blk.0.attn_q.bias"), output_rank(a, "blk.0.attn_k.weight"));
}

TEST(SeedOssRegistry, KvsInTextModelOrderWithValues) {
    const Architecture& a = *find_architecture("seed_oss");
    const std::vector<ArchKv> want = {ArchKv::context_length, ArchKv::embedding_length,
                                      ArchKv::block_count,    ArchKv::feed_forward_length,
                                      ArchKv::head_count,     ArchKv::head_count_kv,
                                      ArchKv::rope_freq_base, ArchKv::rms_epsilon,
                                      ArchKv::key_length,     ArchKv::value_length};
    EXPECT_EQ(std::vector<ArchKv>(a.kvs.begin(), a.kvs.end()), want);
    const ModelConfig c = seed_config();
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::string> keys;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (!kv.key.starts_with("seed_oss.")) continue;
        keys.push_back(kv.key);
        if (kv.key == "seed_oss.attention.key_length" ||
            kv.key == "seed_oss.attention.value_length") {
            EXPECT_EQ(kv.value.as_u32(), 32u) << kv.key;  // head_dim, not 64 / 4
        }
        if (kv.key == "seed_oss.rope.freq_base") {
            EXPECT_EQ(kv.value.as_f32(), 1e7f);
        }
        if (kv.key == "seed_oss.context_length") {
            EXPECT_EQ(kv.value.as_u32(), 524288u);
        }
    }
    // rope_type "default": TextModel writes no rope.scaling KV; v0.4.0's TextModel writes no
    // rope.dimension_count.
    const std::vector<std::string> want_keys = {
        "seed_oss.context_length",       "seed_oss.embedding_length",
        "seed_oss.block_count",          "seed_oss.feed_forward_length",
        "seed_oss.attention.head_count", "seed_oss.attention.head_count_kv",
        "seed_oss.rope.freq_base",       "seed_oss.attention.layer_norm_rms_epsilon",
        "seed_oss.attention.key_length", "seed_oss.attention.value_length"};
    EXPECT_EQ(keys, want_keys);
}

// SeedOssConfig.head_dim defaults to 128, not hidden/heads.
TEST(SeedOssRegistry, HeadDimDefault) {
    EXPECT_EQ(seed_config(false).head_dim, 128u);
    EXPECT_EQ(seed_config(true).head_dim, 32u);
}

}  // namespace
}  // namespace rebox::arch
