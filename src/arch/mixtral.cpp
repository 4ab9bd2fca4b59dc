// mixtral (Mixtral-8x7B, 8x22B): llama.cpp's llama graph with experts (docs/architectures.md):
// llama's attention rows (q/k permuted for NORM rope), then block_sparse_moe: the router `gate`
// (always an exact F32 copy) and E experts w1/w2/w3 (= gate/down/up) stacked into 3-D tensors;
// mlx-lm stores them pre-stacked as block_sparse_moe.switch_mlp.{gate,down,up}_proj. The experts'
// width is intermediate_size (no moe_intermediate_size); GGUF architecture "llama".
#include "llama_rows.hpp"

namespace rebox::arch::detail {
namespace {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"mixtral"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr TensorSpec kLayer[] = {
    kLlamaAttnNorm,
    kLlamaAttnQ,
    kLlamaAttnK,
    kLlamaAttnV,
    kLlamaAttnOut,
    kLlamaFfnNorm,
    {"block_sparse_moe.gate",
     "ffn_gate_inp",
     required,
     absent,
     2,
     {hidden, experts},
     RowTransform::none,
     SourceRole::router_f32},
    {"block_sparse_moe.experts.{e}.w1",
     "ffn_gate_exps",
     required,
     absent,
     3,
     {hidden, expert_ffn, experts},
     RowTransform::none,
     SourceRole::experts,
     "block_sparse_moe.switch_mlp.gate_proj"},
    {"block_sparse_moe.experts.{e}.w2",
     "ffn_down_exps",
     required,
     absent,
     3,
     {expert_ffn, hidden, experts},
     RowTransform::none,
     SourceRole::experts,
     "block_sparse_moe.switch_mlp.down_proj"},
    {"block_sparse_moe.experts.{e}.w3",
     "ffn_up_exps",
     required,
     absent,
     3,
     {hidden, expert_ffn, experts},
     RowTransform::none,
     SourceRole::experts,
     "block_sparse_moe.switch_mlp.up_proj"},
};
constexpr TensorSpec kLast[] = {
    kOutputNorm,
    {"lm_head", "output", required_unless_tied, absent, 2, {hidden, vocab}},
};
// LlamaModel.set_gguf_parameters plus the base class's expert_count / expert_used_count.
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,      ArchKv::embedding_length,     ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,           ArchKv::head_count_kv,
    ArchKv::rope_freq_base,      ArchKv::rms_epsilon,          ArchKv::key_length,
    ArchKv::value_length,        ArchKv::rope_dimension_count, ArchKv::vocab_size,
    ArchKv::expert_count,        ArchKv::expert_used_count,
};
constexpr ExtraTensor kExtras[] = {ExtraTensor::rope_freqs_llama3};

constexpr Architecture kMixtral{"llama", kModelTypes, kFirst, kLayer, kLast, kKvs, kExtras};

}  // namespace

const Architecture& mixtral_architecture() { return kMixtral; }

}  // namespace rebox::arch::detail
