// apertus in the registry against hand-written tables from llama.cpp's apertus loader and graph
// (src/models/apertus.cpp: NEOX rope, q/k norms, up / down only, xIELU parameters per layer from
// the xielu.* arrays) and converter (conversion/llama.py ApertusModel, a LlamaModel with
// undo_permute off): names both ways without a row transform, the per-layer xIELU scalars matched
// to their array keys (not tensors), required tensors (output never tied), and the KVs in
// LlamaModel's order.
#include <gtest/gtest.h>

#include <tuple>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"

namespace rebox::arch {
namespace {

// Apertus-8B-Instruct-2509's config.json scaled down: hidden 64, 4 heads / 2 kv heads, 2 layers,
// no head_dim, llama3 rope scaling, untied.
ModelConfig apertus_config() {
    return parse_model_config(nlohmann::json::parse(
        R"({"architectures": ["ApertusForCausalLM"], "attention_bias": false,
            "bos_token_id": 1, "eos_token_id": 68, "hidden_act": "xielu", "hidden_size": 64,
            "intermediate_size": 96, "max_position_embeddings": 65536, "mlp_bias": false,
            "model_type": "apertus", "num_attention_heads": 4, "num_hidden_layers": 2,
            "num_key_value_heads": 2, "qk_norm": true, "rms_norm_eps": 1e-05,
            "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                             "original_max_position_embeddings": 8192, "rope_type": "llama3"},
            "rope_theta": 12000000, "tie_word_embeddings": false, "vocab_size": 100})"));
}

TEST(ApertusRegistry, NamesBothWaysWithoutPermutation) {
    const Architecture* found = find_architecture("apertus");
    ASSERT_NE(found, nullptr);
    const Architecture& a = *found;
    EXPECT_EQ(a.gguf_arch, "apertus");
    const std::pair<const char*, const char*> rows[] = {
        {"model.embed_tokens.weight", "token_embd.weight"},
        {"model.layers.1.attention_layernorm.weight", "blk.1.attn_norm.weight"},
        {"model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight"},
        {"model.layers.1.self_attn.k_proj.weight", "blk.1.attn_k.weight"},
        {"model.layers.1.self_attn.o_proj.bias", "blk.1.attn_output.bias"},
        {"model.layers.1.self_attn.q_norm.weight", "blk.1.attn_q_norm.weight"},
        {"model.layers.1.self_attn.k_norm.weight", "blk.1.attn_k_norm.weight"},
        {"model.layers.1.feedforward_layernorm.weight", "blk.1.ffn_norm.weight"},
        {"model.layers.1.mlp.up_proj.weight", "blk.1.ffn_up.weight"},
        {"model.layers.1.mlp.down_proj.weight", "blk.1.ffn_down.weight"},
        {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    };
    for (const auto& [hf, gguf] : rows) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf);
        EXPECT_EQ(ref->spec->rows, RowTransform::none) << hf;  // NEOX rope: no permutation
        ASSERT_TRUE(resolve_gguf(a, gguf).has_value()) << gguf;
    }
    // The llama names the loader does not take.
    for (const char* refused :
         {"model.layers.0.mlp.gate_proj.weight", "model.layers.0.input_layernorm.weight",
          "model.layers.0.post_attention_layernorm.weight", "model.layers.0.mlp.up_proj.bias"})
        EXPECT_FALSE(resolve_hf(a, refused).has_value()) << refused;
    ASSERT_EQ(a.extras.size(), 1u);
    EXPECT_EQ(a.extras[0], ExtraTensor::rope_freqs_llama3);
}

// Each layer's xIELU scalar is no tensor: it is one entry of a xielu.* array, by layer.
TEST(ApertusRegistry, XieluScalarsAreArrayEntries) {
    const Architecture& a = *find_architecture("apertus");
    const std::tuple<const char*, const char*, uint32_t> scalars[] = {
        {"model.layers.0.mlp.act_fn.alpha_n", "xielu.alpha_n", 0},
        {"model.layers.1.mlp.act_fn.alpha_p", "xielu.alpha_p", 1},
        {"layers.1.mlp.act_fn.beta", "xielu.beta", 1},
        {"model.layers.0.mlp.act_fn.eps", "xielu.eps", 0},
    };
    for (const auto& [hf, key, layer] : scalars) {
        const auto match = match_layer_scalar(a, hf);
        ASSERT_TRUE(match.has_value()) << hf;
        EXPECT_EQ(a.layer_scalar_kvs[match->first].key, key);
        EXPECT_EQ(match->second, layer);
        EXPECT_FALSE(resolve_hf(a, hf).has_value()) << hf;
    }
    for (const char* other : {"model.layers.0.mlp.act_fn.alpha_n.weight",
                              "model.layers.x.mlp.act_fn.beta", "model.mlp.act_fn.beta"})
        EXPECT_FALSE(match_layer_scalar(a, other).has_value()) << other;
    // The order the converter completes the arrays in (alpha_n, alpha_p, beta, eps).
    ASSERT_EQ(a.layer_scalar_kvs.size(), 4u);
    EXPECT_EQ(a.layer_scalar_kvs[0].key, "xielu.alpha_n");
    EXPECT_EQ(a.layer_scalar_kvs[3].key, "xielu.eps");
    EXPECT_FALSE(match_layer_scalar(*find_architecture("llama"), "model.layers.0.mlp.act_fn.beta"));
}

TEST(ApertusRegistry, RequiredTensorsUntied) {
    const Architecture& a = *find_architecture("apertus");
    ModelConfig c = apertus_config();
    c.num_hidden_layers = 1;
    c.tie_word_embeddings = true;  // the loader never ties: output.weight still required
    const std::vector<std::string> want = {"token_embd.weight",
                                           "blk.0.attn_norm.weight",
                                           "blk.0.attn_q.weight",
                                           "blk.0.attn_k.weight",
                                           "blk.0.attn_v.weight",
                                           "blk.0.attn_output.weight",
                                           "blk.0.attn_q_norm.weight",
                                           "blk.0.attn_k_norm.weight",
                                           "blk.0.ffn_norm.weight",
                                           "blk.0.ffn_up.weight",
                                           "blk.0.ffn_down.weight",
                                           "output_norm.weight",
                                           "output.weight"};
    EXPECT_EQ(required_tensors(a, c), want);
    EXPECT_EQ(expected_ne(a, c, "blk.0.attn_q_norm.weight"), (std::vector<int64_t>{16}));  // 64/4
    EXPECT_EQ(expected_ne(a, c, "blk.0.ffn_up.weight"), (std::vector<int64_t>{64, 96}));
}

// TextModel's keys (no head_dim: no key/value length), LlamaModel's vocab_size and
// rope.dimension_count; llama3 rope scaling writes no KV (rope_freqs instead); then the xielu
// arrays from the layers' values, without the arch prefix.
TEST(ApertusRegistry, KvsInLlamaModelOrderThenXielu) {
    const ModelConfig c = apertus_config();
    ModelMetadataInput input;
    input.config = &c;
    input.layer_scalar_kvs = {{"xielu.alpha_n", {0.5f, 0.25f}},
                              {"xielu.alpha_p", {1.5f, 2.0f}},
                              {"xielu.beta", {0.5f, 0.5f}},
                              {"xielu.eps", {-1e-6f, -1e-6f}}};
    std::vector<std::string> keys;
    for (const GgufKV& kv : build_model_metadata(input)) {
        if (kv.key.starts_with("apertus.")) keys.push_back(kv.key.substr(8));
        if (kv.key.starts_with("xielu.")) {
            keys.push_back(kv.key);
            ASSERT_TRUE(kv.value.is_array());
            EXPECT_EQ(kv.value.elem_type, GgufType::FLOAT32);
            ASSERT_EQ(kv.value.array.size(), 2u);
        }
        if (kv.key == "xielu.alpha_n") {
            EXPECT_EQ(std::get<double>(kv.value.array[1]), 0.25);
        }
        if (kv.key == "apertus.rope.dimension_count") {
            EXPECT_EQ(kv.value.as_u32(), 16u);
        }
    }
    const std::vector<std::string> want = {
        "context_length",       "embedding_length",
        "block_count",          "feed_forward_length",
        "attention.head_count", "attention.head_count_kv",
        "rope.freq_base",       "attention.layer_norm_rms_epsilon",
        "vocab_size",           "rope.dimension_count",
        "xielu.alpha_n",        "xielu.alpha_p",
        "xielu.beta",           "xielu.eps"};
    EXPECT_EQ(keys, want);
}

}  // namespace
}  // namespace rebox::arch
