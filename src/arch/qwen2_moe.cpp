// qwen2_moe (Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B): llama.cpp's qwen2moe graph
// (docs/architectures.md): qwen2's attention (q/k/v biases, NEOX rope), a router, E experts
// stacked into 3-D tensors, and one shared expert (ffn_*_shexp) with its sigmoid gate
// (ffn_gate_inp_shexp, HF [1, hidden] -> ne {hidden, 1}). Router and shared-expert gate are always
// exact F32 copies (SourceRole::router_f32). The loader requires output.weight (no tying).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace qwen2_moe_record {

constexpr std::string_view kModelTypes[] = {"qwen2_moe"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(kQwen2Attention, kQwenMoeFfn, kQwenSharedExpert);
constexpr TensorSpec kLast[] = {kOutputNorm, output_row(Presence::required)};
// Qwen2MoeModel.set_gguf_parameters: the base keys, expert_count / expert_used_count,
// expert_feed_forward_length and expert_shared_feed_forward_length.
constexpr auto kKvs = join(kDecoderKvs, std::array{ArchKv::expert_count, ArchKv::expert_used_count,
                                                   ArchKv::expert_feed_forward_length,
                                                   ArchKv::expert_shared_feed_forward_length});

constexpr Architecture kQwen2Moe = [] {
    Architecture a{"qwen2moe", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace qwen2_moe_record

const Architecture& qwen2_moe_architecture() { return qwen2_moe_record::kQwen2Moe; }

}  // namespace rebox::arch::detail
