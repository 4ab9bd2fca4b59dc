// qwen3_moe (Qwen3-30B-A3B, Qwen3-235B-A22B): llama.cpp's qwen3moe graph (docs/architectures.md):
// qwen3's attention (per-head q/k RMSNorms, no biases, NEOX rope) and in every layer a router
// plus E experts stacked into 3-D tensors (ne {hidden, moe_ffn, E} for gate/up, {moe_ffn, hidden,
// E} for down). The router is always an exact F32 copy (SourceRole::router_f32).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace qwen3_moe_record {

constexpr std::string_view kModelTypes[] = {"qwen3_moe"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(kQwen3Attention, kQwenMoeFfn);
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};
// Qwen2MoeModel.set_gguf_parameters: the base keys (feed_forward_length from intermediate_size),
// expert_count / expert_used_count, and expert_feed_forward_length from moe_intermediate_size.
constexpr auto kKvs = join(kDecoderKvs, std::array{ArchKv::expert_count, ArchKv::expert_used_count,
                                                   ArchKv::expert_feed_forward_length});

constexpr Architecture kQwen3Moe = [] {
    Architecture a{"qwen3moe", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.nvfp4_scales = {.output = true, .experts = true};
    return a;
}();

}  // namespace qwen3_moe_record

const Architecture& qwen3_moe_architecture() { return qwen3_moe_record::kQwen3Moe; }

}  // namespace rebox::arch::detail
