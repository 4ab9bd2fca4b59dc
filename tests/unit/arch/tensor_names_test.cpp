// HF <-> GGUF tensor names against the table in docs/gguf.md §4.1, both directions, with and
// without the "model." prefix, per architecture, and refusals for names that have no mapping.
#include "arch/tensor_names.hpp"

#include <gtest/gtest.h>

namespace rebox {
namespace {

struct NameCase {
    const char* hf;  // unprefixed
    const char* gguf;
};

// docs/gguf.md §4.1, layer 7 and layer 0.
constexpr NameCase kQwen3Names[] = {
    {"embed_tokens.weight", "token_embd.weight"},
    {"norm.weight", "output_norm.weight"},
    {"lm_head.weight", "output.weight"},
    {"layers.7.input_layernorm.weight", "blk.7.attn_norm.weight"},
    {"layers.7.self_attn.q_proj.weight", "blk.7.attn_q.weight"},
    {"layers.7.self_attn.k_proj.weight", "blk.7.attn_k.weight"},
    {"layers.7.self_attn.v_proj.weight", "blk.7.attn_v.weight"},
    {"layers.7.self_attn.o_proj.weight", "blk.7.attn_output.weight"},
    {"layers.7.self_attn.q_norm.weight", "blk.7.attn_q_norm.weight"},
    {"layers.7.self_attn.k_norm.weight", "blk.7.attn_k_norm.weight"},
    {"layers.7.post_attention_layernorm.weight", "blk.7.ffn_norm.weight"},
    {"layers.7.mlp.gate_proj.weight", "blk.7.ffn_gate.weight"},
    {"layers.7.mlp.up_proj.weight", "blk.7.ffn_up.weight"},
    {"layers.7.mlp.down_proj.weight", "blk.7.ffn_down.weight"},
    {"layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight"},
    {"layers.27.mlp.down_proj.weight", "blk.27.ffn_down.weight"},
};

TEST(ModelTensorNames, Qwen3BothDirectionsWithAndWithoutPrefix) {
    for (const NameCase& c : kQwen3Names) {
        EXPECT_EQ(gguf_tensor_name("qwen3", c.hf), c.gguf) << c.hf;
        EXPECT_EQ(gguf_tensor_name("qwen3", std::string("model.") + c.hf), c.gguf) << c.hf;
        EXPECT_EQ(hf_tensor_name("qwen3", c.gguf), c.hf) << c.gguf;
    }
}

TEST(ModelTensorNames, Qwen2HasBiasesButNoQkNorm) {
    EXPECT_EQ(gguf_tensor_name("qwen2", "model.layers.3.self_attn.q_proj.bias"),
              "blk.3.attn_q.bias");
    EXPECT_EQ(gguf_tensor_name("qwen2", "model.layers.3.self_attn.k_proj.bias"),
              "blk.3.attn_k.bias");
    EXPECT_EQ(gguf_tensor_name("qwen2", "model.layers.3.self_attn.v_proj.bias"),
              "blk.3.attn_v.bias");
    EXPECT_EQ(hf_tensor_name("qwen2", "blk.3.attn_v.bias"), "layers.3.self_attn.v_proj.bias");
    EXPECT_EQ(gguf_tensor_name("qwen2", "model.layers.3.self_attn.o_proj.weight"),
              "blk.3.attn_output.weight");
    EXPECT_FALSE(gguf_tensor_name("qwen2", "model.layers.3.self_attn.q_norm.weight").has_value());
    EXPECT_FALSE(hf_tensor_name("qwen2", "blk.3.attn_k_norm.weight").has_value());
    EXPECT_FALSE(gguf_tensor_name("qwen2", "model.layers.3.self_attn.o_proj.bias").has_value());
}

TEST(ModelTensorNames, LlamaHasNoQkNorm) {
    EXPECT_EQ(gguf_tensor_name("llama", "model.layers.1.mlp.gate_proj.weight"),
              "blk.1.ffn_gate.weight");
    EXPECT_EQ(gguf_tensor_name("llama", "lm_head.weight"), "output.weight");
    EXPECT_FALSE(gguf_tensor_name("llama", "model.layers.1.self_attn.q_norm.weight").has_value());
}

TEST(ModelTensorNames, UnknownNamesAndArchitecturesAreRefused) {
    for (const char* name :
         {"model.layers.1.self_attn.rotary_emb.inv_freq", "model.layers.1.mlp.gate_proj",
          "layers.1.foo.weight", "layers..self_attn.q_proj.weight",
          "layers.01.self_attn.q_proj.weight", "layers.+1.self_attn.q_proj.weight",
          "layers.1x.self_attn.q_proj.weight", "layers.99999999999.self_attn.q_proj.weight",
          "embed_tokens.bias", "lm_head.weight.weight", "model.embed_tokens", "", ".weight",
          "blk.1.attn_q.weight"})
        EXPECT_FALSE(gguf_tensor_name("qwen3", name).has_value()) << name;
    for (const char* name :
         {"blk.01.attn_q.weight", "blk.1.attn_q", "token_embd", "layers.1.self_attn.q_proj.weight",
          "blk.1.attn_qkv.weight", "output.bias"})
        EXPECT_FALSE(hf_tensor_name("qwen3", name).has_value()) << name;
    EXPECT_FALSE(gguf_tensor_name("t5", "model.embed_tokens.weight").has_value());
    EXPECT_FALSE(hf_tensor_name("t5", "token_embd.weight").has_value());
}

TEST(ModelTensorNames, PrefixStripAndSupportedArchs) {
    EXPECT_EQ(strip_model_prefix("model.layers.0.mlp.up_proj.weight"),
              "layers.0.mlp.up_proj.weight");
    EXPECT_EQ(strip_model_prefix("lm_head.weight"), "lm_head.weight");
    EXPECT_TRUE(is_supported_arch("qwen3"));
    EXPECT_TRUE(is_supported_arch("qwen2"));
    EXPECT_TRUE(is_supported_arch("llama"));
    EXPECT_TRUE(is_supported_arch("qwen3_moe"));
    EXPECT_FALSE(is_supported_arch("deepseek_v4"));
    EXPECT_FALSE(is_supported_arch(""));
}

}  // namespace
}  // namespace rebox
