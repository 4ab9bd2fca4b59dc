// Shapes verify derives from config.json alone, on the Qwen3-Embedding-0.6B numbers (docs/gguf.md
// §3.2: E=1024, H=16, Hkv=8, D=128, F=3072, 28 layers, vocab 151669), in HF [out, in] order.
#include "verify/arch/expected_shapes.hpp"

#include <gtest/gtest.h>

#include "qwen3_06b_config.hpp"

namespace rebox::verify_ref {
namespace {

using Shape = std::vector<int64_t>;

TEST(VerifyExpectedShapes, Qwen3Embedding06B) {
    const RefConfig c = test::qwen3_embedding_06b_config<RefConfig>();
    EXPECT_EQ(expected_hf_shape(c, "embed_tokens.weight"), (Shape{151669, 1024}));
    EXPECT_EQ(expected_hf_shape(c, "norm.weight"), (Shape{1024}));
    EXPECT_EQ(expected_hf_shape(c, "layers.0.self_attn.q_proj.weight"), (Shape{2048, 1024}));
    EXPECT_EQ(expected_hf_shape(c, "layers.27.self_attn.k_proj.weight"), (Shape{1024, 1024}));
    EXPECT_EQ(expected_hf_shape(c, "layers.5.self_attn.v_proj.weight"), (Shape{1024, 1024}));
    EXPECT_EQ(expected_hf_shape(c, "layers.5.self_attn.o_proj.weight"), (Shape{1024, 2048}));
    EXPECT_EQ(expected_hf_shape(c, "layers.5.self_attn.q_norm.weight"), (Shape{128}));
    EXPECT_EQ(expected_hf_shape(c, "layers.5.mlp.gate_proj.weight"), (Shape{3072, 1024}));
    EXPECT_EQ(expected_hf_shape(c, "layers.5.mlp.down_proj.weight"), (Shape{1024, 3072}));
    EXPECT_EQ(expected_hf_shape(c, "layers.5.post_attention_layernorm.weight"), (Shape{1024}));
    EXPECT_FALSE(expected_hf_shape(c, "layers.5.mlp.extra_proj.weight").has_value());
    EXPECT_FALSE(expected_hf_shape(c, "layersX.5.mlp.up_proj.weight").has_value());
}

TEST(VerifyExpectedShapes, LayerRange) {
    const RefConfig c = test::qwen3_embedding_06b_config<RefConfig>();
    EXPECT_TRUE(layer_in_range(c, "layers.27.mlp.up_proj.weight"));
    EXPECT_FALSE(layer_in_range(c, "layers.28.mlp.up_proj.weight"));
    EXPECT_TRUE(layer_in_range(c, "norm.weight"));
}

}  // namespace
}  // namespace rebox::verify_ref
