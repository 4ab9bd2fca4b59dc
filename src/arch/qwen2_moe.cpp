// qwen2_moe (Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B): llama.cpp's qwen2moe graph
// (docs/architectures.md): qwen2's attention (q/k/v biases, NEOX rope), a router, E experts
// stacked into 3-D tensors, and one shared expert (ffn_*_shexp) with its sigmoid gate
// (ffn_gate_inp_shexp, HF [1, hidden] -> ne {hidden, 1}). Router and shared-expert gate are always
// exact F32 copies (SourceRole::router_f32). The loader requires output.weight (no tying).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"qwen2_moe"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr TensorSpec kLayer[] = {
    {"input_layernorm", "attn_norm", required, absent, 1, {hidden}},
    {"self_attn.q_proj", "attn_q", required, optional, 2, {hidden, q_width}},
    {"self_attn.k_proj", "attn_k", required, optional, 2, {hidden, kv_width}},
    {"self_attn.v_proj", "attn_v", required, optional, 2, {hidden, kv_width}},
    {"self_attn.o_proj", "attn_output", required, absent, 2, {q_width, hidden}},
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
    {"mlp.shared_expert_gate",
     "ffn_gate_inp_shexp",
     required,
     absent,
     2,
     {hidden, one},
     RowTransform::none,
     SourceRole::router_f32},
    {"mlp.shared_expert.gate_proj", "ffn_gate_shexp", required, absent, 2, {hidden, shared_ffn}},
    {"mlp.shared_expert.down_proj", "ffn_down_shexp", required, absent, 2, {shared_ffn, hidden}},
    {"mlp.shared_expert.up_proj", "ffn_up_shexp", required, absent, 2, {hidden, shared_ffn}},
};
constexpr TensorSpec kLast[] = {
    kOutputNorm,
    {"lm_head", "output", required, absent, 2, {hidden, vocab}},
};
// Qwen2MoeModel.set_gguf_parameters: the base keys, expert_count / expert_used_count,
// expert_feed_forward_length and expert_shared_feed_forward_length.
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,
    ArchKv::embedding_length,
    ArchKv::block_count,
    ArchKv::feed_forward_length,
    ArchKv::head_count,
    ArchKv::head_count_kv,
    ArchKv::rope_freq_base,
    ArchKv::rms_epsilon,
    ArchKv::key_length,
    ArchKv::value_length,
    ArchKv::rope_dimension_count,
    ArchKv::expert_count,
    ArchKv::expert_used_count,
    ArchKv::expert_feed_forward_length,
    ArchKv::expert_shared_feed_forward_length,
};

constexpr Architecture kQwen2Moe{"qwen2moe", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};

}  // namespace

const Architecture& qwen2_moe_architecture() { return kQwen2Moe; }

}  // namespace rebox::arch::detail
