// Which NVFP4 per-tensor factors (<tensor>.scale) llama.cpp v0.4.0's qwen35 / qwen35moe graphs
// multiply in, read by hand from src/models/qwen35.cpp and qwen35moe.cpp (build_lora_mm's scale
// argument): wqkv_s, wqkv_gate_s, wq/wk/wv/wo_s, ssm_beta_s, ssm_alpha_s, ssm_out_s,
// nextn.eh_proj_s, output_s, and ffn_{up,gate,down}_s (dense) or ffn_*_exps_s and ffn_*_shexp_s
// (MoE). The writer's record and verify's own record must both say so.
#include <gtest/gtest.h>

#include <string>

#include "arch/architecture.hpp"
#include "verify/sources/nvidia_fp4_index.hpp"

namespace rebox {
namespace {

void expect_roles(const char* arch, const std::vector<std::string>& applied,
                  const std::vector<std::string>& ignored) {
    const arch::Architecture* a = arch::find_architecture(arch);
    ASSERT_NE(a, nullptr) << arch;
    for (const std::string& role : applied) {
        EXPECT_TRUE(arch::graph_applies_nvfp4_scale(*a, role)) << arch << " " << role;
        const std::string weight = role == "output" ? "output.weight" : "blk.0." + role + ".weight";
        EXPECT_TRUE(verify_ref::ref_graph_applies_scale(arch, weight)) << arch << " " << weight;
    }
    for (const std::string& role : ignored) {
        EXPECT_FALSE(arch::graph_applies_nvfp4_scale(*a, role)) << arch << " " << role;
        EXPECT_FALSE(verify_ref::ref_graph_applies_scale(arch, "blk.0." + role + ".weight"))
            << arch << " " << role;
    }
}

TEST(Qwen35ScaleRoles, DenseGraph) {
    expect_roles(
        "qwen35",
        {"attn_qkv", "attn_gate", "attn_q", "attn_k", "attn_v", "attn_output", "ssm_beta",
         "ssm_alpha", "ssm_out", "nextn.eh_proj", "ffn_gate", "ffn_up", "ffn_down", "output"},
        {"ffn_gate_exps", "ffn_up_shexp", "ssm_conv1d"});
}

TEST(Qwen35ScaleRoles, MoeGraph) {
    expect_roles("qwen35moe",
                 {"attn_qkv", "attn_gate", "attn_q", "attn_output", "ssm_beta", "ssm_alpha",
                  "ssm_out", "nextn.eh_proj", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps",
                  "ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp", "output"},
                 {"ffn_gate", "ffn_up", "ffn_down", "ffn_gate_inp"});
}

}  // namespace
}  // namespace rebox
