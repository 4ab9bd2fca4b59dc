// Qwen3.5 from MLX, at the plan: mlx-lm's sanitize has already added 1 to the (1 + w) norms, so a
// float one is a plain F32 copy (no add_one_f32); a quantized one is still refused, naming it, as a
// norm is never a block type (the BLOCKER attach_value_transform gives every shifted norm).
#include <gtest/gtest.h>

#include "plan/plan.hpp"
#include "source/mlx_reader.hpp"
#include "source/mlx_test_writer.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

const TensorPlan* q35_tensor(const Plan& p, const std::string& name) {
    for (const TensorPlan& t : p.tensors)
        if (t.gguf_name == name) return &t;
    return nullptr;
}

TEST(Qwen35Plan, MlxShiftedNormsCopiedQuantizedNormRefused) {
    test::ScratchDir dir{"qwen35_plan"};
    test::MlxDir mlx;
    mlx.config = {{"model_type", "qwen3_5_text"},
                  {"hidden_size", 64},
                  {"intermediate_size", 128},
                  {"num_hidden_layers", 2},
                  {"num_attention_heads", 4},
                  {"num_key_value_heads", 2},
                  {"head_dim", 16},
                  {"linear_key_head_dim", 16},
                  {"linear_value_head_dim", 16},
                  {"linear_num_key_heads", 2},
                  {"linear_num_value_heads", 4},
                  {"full_attention_interval", 2},
                  {"max_position_embeddings", 512},
                  {"vocab_size", 128},
                  {"quantization", {{"group_size", 64}, {"bits", 4}}}};
    // input_layernorm of layer 0 as a [1, 64] module at 4 bits; model.norm a float [64].
    mlx.quant("model.layers.0.input_layernorm", 1, std::vector<uint32_t>(8, 0x12345678u), 1);
    mlx.plain("model.norm.weight", "BF16", {64});
    mlx.write(dir.path());
    const SourceModel source = read_mlx_model(*ModelDir::open(dir.path()));
    const Plan p = make_plan(source, PlanOptions{});
    size_t named = 0;
    for (const Blocker& b : p.blockers)
        if (b.tensor == "model.layers.0.input_layernorm.weight") {
            ++named;
            EXPECT_NE(b.reason.find("stored quantized (4-bit codes)"), std::string::npos)
                << b.reason;
        }
    EXPECT_EQ(named, 1u);
    EXPECT_EQ(q35_tensor(p, "blk.0.attn_norm.weight"), nullptr);
    const TensorPlan* norm = q35_tensor(p, "output_norm.weight");
    ASSERT_NE(norm, nullptr);
    EXPECT_EQ(norm->type, GgmlType::F32);
    EXPECT_NE(norm->encoding, Encoding::add_one_f32);  // already + 1: copied as stored
}

}  // namespace
}  // namespace rebox
