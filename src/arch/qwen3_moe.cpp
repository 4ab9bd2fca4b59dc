// qwen3_moe (Qwen3-30B-A3B, Qwen3-235B-A22B): llama.cpp's qwen3moe graph (docs/architectures.md):
// qwen3's attention (per-head q/k RMSNorms, no biases, NEOX rope) and in every layer a router
// plus E experts stacked into 3-D tensors (ne {hidden, moe_ffn, E} for gate/up, {moe_ffn, hidden,
// E} for down). The router is always an exact F32 copy (SourceRole::router_f32).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"qwen3_moe"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr TensorSpec kLayer[] = {
    {"input_layernorm", "attn_norm", required, absent, 1, {hidden}},
    {"self_attn.q_proj", "attn_q", required, absent, 2, {hidden, q_width}},
    {"self_attn.k_proj", "attn_k", required, absent, 2, {hidden, kv_width}},
    {"self_attn.v_proj", "attn_v", required, absent, 2, {hidden, kv_width}},
    {"self_attn.o_proj", "attn_output", required, absent, 2, {q_width, hidden}},
    {"self_attn.q_norm", "attn_q_norm", required, absent, 1, {head_dim}},
    {"self_attn.k_norm", "attn_k_norm", required, absent, 1, {head_dim}},
    {"post_attention_layernorm", "ffn_norm", required, absent, 1, {hidden}},
    {"mlp.gate",
     "ffn_gate_inp",
     required,
     absent,
     2,
     {hidden, experts},
     RowTransform::none,
     SourceRole::router_f32},
    {"mlp.experts.{e}.gate_proj",
     "ffn_gate_exps",
     required,
     absent,
     3,
     {hidden, expert_ffn, experts},
     RowTransform::none,
     SourceRole::experts,
     "mlp.switch_mlp.gate_proj"},
    {"mlp.experts.{e}.down_proj",
     "ffn_down_exps",
     required,
     absent,
     3,
     {expert_ffn, hidden, experts},
     RowTransform::none,
     SourceRole::experts,
     "mlp.switch_mlp.down_proj"},
    {"mlp.experts.{e}.up_proj",
     "ffn_up_exps",
     required,
     absent,
     3,
     {hidden, expert_ffn, experts},
     RowTransform::none,
     SourceRole::experts,
     "mlp.switch_mlp.up_proj"},
};
constexpr TensorSpec kLast[] = {
    kOutputNorm,
    {"lm_head", "output", required_unless_tied, absent, 2, {hidden, vocab}},
};
// Qwen2MoeModel.set_gguf_parameters: the base keys (feed_forward_length from intermediate_size),
// expert_count / expert_used_count, and expert_feed_forward_length from moe_intermediate_size.
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,       ArchKv::embedding_length,
    ArchKv::block_count,          ArchKv::feed_forward_length,
    ArchKv::head_count,           ArchKv::head_count_kv,
    ArchKv::rope_freq_base,       ArchKv::rms_epsilon,
    ArchKv::key_length,           ArchKv::value_length,
    ArchKv::rope_dimension_count, ArchKv::expert_count,
    ArchKv::expert_used_count,    ArchKv::expert_feed_forward_length,
};

constexpr Architecture kQwen3Moe{"qwen3moe", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};

}  // namespace

const Architecture& qwen3_moe_architecture() { return kQwen3Moe; }

}  // namespace rebox::arch::detail
