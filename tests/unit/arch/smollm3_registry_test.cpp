// smollm3 in the registry against hand-written tables from llama.cpp's smollm3 loader and graph
// (src/models/smollm3.cpp: rope off where (il + 1) % 4 == 0, hard-coded) and converter
// (conversion/llama.py SmolLM3Model, a LlamaModel): names both ways with llama's q/k row
// permutation, no o_proj / feed-forward bias, the KVs in LlamaModel's order (no key/value length
// without a head_dim in config.json; vocab_size and rope.dimension_count), no rope_freqs, and
// no_rope_layers read (listed, or from no_rope_layer_interval) and refused when it is not the
// graph's pattern.
#include <gtest/gtest.h>

#include <tuple>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"

namespace rebox::arch {
namespace {

// SmolLM3-3B's keys scaled down: hidden 64, 4 heads / 2 kv heads, 8 layers, tied.
ModelConfig smol_config(const std::string& extra = "") {
    return parse_model_config(nlohmann::json::parse(
        R"({"architectures": ["SmolLM3ForCausalLM"], "hidden_size": 64, "intermediate_size": 96,
            "max_position_embeddings": 65536, "model_type": "smollm3", "num_attention_heads": 4,
            "num_hidden_layers": 8, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
            "rope_theta": 5000000.0, "tie_word_embeddings": true, "vocab_size": 100)" +
        extra + "}"));
}

std::vector<std::string> smol_problems(const ModelConfig& c) {
    return config_problems(*find_architecture("smollm3"), c);
}

TEST(SmolLm3Registry, NamesBothWaysWithLlamasPermutation) {
    const Architecture* found = find_architecture("smollm3");
    ASSERT_NE(found, nullptr);
    const Architecture& a = *found;
    EXPECT_EQ(a.gguf_arch, "smollm3");
    const std::tuple<const char*, const char*, RowTransform> rows[] = {
        {"model.embed_tokens.weight", "token_embd.weight", RowTransform::none},
        {"model.layers.3.input_layernorm.weight", "blk.3.attn_norm.weight", RowTransform::none},
        {"model.layers.3.self_attn.q_proj.weight", "blk.3.attn_q.weight",
         RowTransform::rope_pairs_q_heads},
        {"model.layers.3.self_attn.k_proj.weight", "blk.3.attn_k.weight",
         RowTransform::rope_pairs_kv_heads},
        {"model.layers.3.self_attn.k_proj.bias", "blk.3.attn_k.bias",
         RowTransform::rope_pairs_kv_heads},
        {"model.layers.3.self_attn.v_proj.weight", "blk.3.attn_v.weight", RowTransform::none},
        {"model.layers.3.self_attn.o_proj.weight", "blk.3.attn_output.weight", RowTransform::none},
        {"model.layers.3.post_attention_layernorm.weight", "blk.3.ffn_norm.weight",
         RowTransform::none},
        {"model.layers.3.mlp.down_proj.weight", "blk.3.ffn_down.weight", RowTransform::none},
        {"model.norm.weight", "output_norm.weight", RowTransform::none},
        {"lm_head.weight", "output.weight", RowTransform::none},
    };
    for (const auto& [hf, gguf, transform] : rows) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(ref->spec->rows, transform) << hf;
        ASSERT_TRUE(resolve_gguf(a, gguf).has_value()) << gguf;
    }
    for (const char* refused :
         {"model.layers.0.self_attn.o_proj.bias", "model.layers.0.mlp.up_proj.bias",
          "model.layers.0.self_attn.q_norm.weight"})
        EXPECT_FALSE(resolve_hf(a, refused).has_value()) << refused;
    EXPECT_TRUE(a.extras.empty());  // the smollm3 loader takes no rope_freqs
}

TEST(SmolLm3Registry, RequiredTensorsTied) {
    const Architecture& a = *find_architecture("smollm3");
    ModelConfig c = smol_config();
    c.num_hidden_layers = 1;
    const std::vector<std::string> tied = {
        "token_embd.weight",     "blk.0.attn_norm.weight", "blk.0.attn_q.weight",
        "blk.0.attn_k.weight",   "blk.0.attn_v.weight",    "blk.0.attn_output.weight",
        "blk.0.ffn_norm.weight", "blk.0.ffn_gate.weight",  "blk.0.ffn_up.weight",
        "blk.0.ffn_down.weight", "output_norm.weight"};
    EXPECT_EQ(required_tensors(a, c), tied);
    EXPECT_EQ(transform_heads(RowTransform::rope_pairs_kv_heads, c), 2u);
}

TEST(SmolLm3Registry, KvsInLlamaModelOrder) {
    const ModelConfig c = smol_config();
    ModelMetadataInput input;
    input.config = &c;
    std::vector<std::string> keys;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (!kv.key.starts_with("smollm3.")) continue;
        keys.push_back(kv.key.substr(8));
        if (kv.key == "smollm3.rope.dimension_count") {
            EXPECT_EQ(kv.value.as_u32(), 16u);  // 64/4
        }
        if (kv.key == "smollm3.vocab_size") {
            EXPECT_EQ(kv.value.as_u32(), 100u);
        }
    }
    const std::vector<std::string> want = {
        "context_length",       "embedding_length",
        "block_count",          "feed_forward_length",
        "attention.head_count", "attention.head_count_kv",
        "rope.freq_base",       "attention.layer_norm_rms_epsilon",
        "vocab_size",           "rope.dimension_count"};
    EXPECT_EQ(keys, want);
}

TEST(SmolLm3Registry, NoRopeLayers) {
    // Listed as SmolLM3-3B lists them (1 = rope): the graph's pattern.
    const ModelConfig listed = smol_config(R"(, "no_rope_layers": [1, 1, 1, 0, 1, 1, 1, 0])");
    EXPECT_EQ(listed.rope_layers,
              (std::vector<bool>{true, true, true, false, true, true, true, false}));
    EXPECT_TRUE(smol_problems(listed).empty());
    // Left out: transformers' default from no_rope_layer_interval (4).
    EXPECT_EQ(smol_config().rope_layers, listed.rope_layers);
    EXPECT_TRUE(smol_problems(smol_config()).empty());
    // Another interval, another pattern, a short list, all rope: not what llama.cpp runs.
    for (const char* extra :
         {R"(, "no_rope_layer_interval": 2)", R"(, "no_rope_layers": [1, 1, 0, 1, 1, 1, 1, 0])",
          R"(, "no_rope_layers": [1, 1, 1, 0])",
          R"(, "no_rope_layers": [1, 1, 1, 1, 1, 1, 1, 1])"}) {
        const auto problems = smol_problems(smol_config(extra));
        ASSERT_EQ(problems.size(), 1u) << extra;
        EXPECT_NE(problems[0].find("no_rope_layers"), std::string::npos) << problems[0];
    }
    EXPECT_THROW(smol_config(R"(, "no_rope_layers": [1, 2, 1, 0, 1, 1, 1, 0])"), Error);
}

}  // namespace
}  // namespace rebox::arch
