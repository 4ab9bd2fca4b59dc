// mixtral (Mixtral-8x7B, 8x22B): llama.cpp's llama graph with experts (docs/architectures.md):
// llama's attention rows (q/k permuted for NORM rope), then block_sparse_moe: the router `gate`
// (always an exact F32 copy) and E experts w1/w2/w3 (= gate/down/up) stacked into 3-D tensors;
// mlx-lm stores them pre-stacked as block_sparse_moe.switch_mlp.{gate,down,up}_proj. The experts'
// width is intermediate_size (no moe_intermediate_size); GGUF architecture "llama".
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace mixtral_record {

constexpr std::string_view kModelTypes[] = {"mixtral"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer =
    join(kLlamaAttention, std::array{
                              router_row("block_sparse_moe.gate", "ffn_gate_inp"),
                              experts_row("block_sparse_moe.experts.{e}.w1", "ffn_gate_exps",
                                          "block_sparse_moe.switch_mlp.gate_proj", false),
                              experts_row("block_sparse_moe.experts.{e}.w2", "ffn_down_exps",
                                          "block_sparse_moe.switch_mlp.down_proj", true),
                              experts_row("block_sparse_moe.experts.{e}.w3", "ffn_up_exps",
                                          "block_sparse_moe.switch_mlp.up_proj", false),
                          });
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};
// LlamaModel.set_gguf_parameters plus the base class's expert_count / expert_used_count.
constexpr auto kKvs = join(
    kDecoderKvs, std::array{ArchKv::vocab_size, ArchKv::expert_count, ArchKv::expert_used_count});
constexpr ExtraTensor kExtras[] = {ExtraTensor::rope_freqs_llama3};

constexpr Architecture kMixtral = [] {
    Architecture a{"llama", kModelTypes, kFirst, kLayer, kLast, kKvs, kExtras};
    // The llama graph (mixtral is llama with experts).
    a.nvfp4_scales = {.output = true, .dense_ffn = true, .experts = true};
    return a;
}();

}  // namespace mixtral_record

const Architecture& mixtral_architecture() { return mixtral_record::kMixtral; }

}  // namespace rebox::arch::detail
