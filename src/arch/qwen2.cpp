// qwen2 (Qwen2, Qwen2.5): llama.cpp's qwen2 graph (docs/gguf.md §3.2): q/k/v biases, an optional
// output bias, no q/k norms, NEOX rope (no row permutation).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"qwen2"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr TensorSpec kLayer[] = {
    {"input_layernorm", "attn_norm", required, absent, 1, {hidden}},
    {"self_attn.q_proj", "attn_q", required, optional, 2, {hidden, q_width}},
    {"self_attn.k_proj", "attn_k", required, optional, 2, {hidden, kv_width}},
    {"self_attn.v_proj", "attn_v", required, optional, 2, {hidden, kv_width}},
    {"self_attn.o_proj", "attn_output", required, absent, 2, {q_width, hidden}},
    {"post_attention_layernorm", "ffn_norm", required, absent, 1, {hidden}},
    {"mlp.gate_proj", "ffn_gate", required, absent, 2, {hidden, ffn}},
    {"mlp.up_proj", "ffn_up", required, absent, 2, {hidden, ffn}},
    {"mlp.down_proj", "ffn_down", required, absent, 2, {ffn, hidden}},
};
// qwen2.cpp loads an optional output.bias [V].
constexpr TensorSpec kLast[] = {
    kOutputNorm,
    {"lm_head", "output", required_unless_tied, optional, 2, {hidden, vocab}},
};
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,      ArchKv::embedding_length,     ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,           ArchKv::head_count_kv,
    ArchKv::rope_freq_base,      ArchKv::rms_epsilon,          ArchKv::key_length,
    ArchKv::value_length,        ArchKv::rope_dimension_count,
};

constexpr Architecture kQwen2{"qwen2", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};

}  // namespace

const Architecture& qwen2_architecture() { return kQwen2; }

}  // namespace rebox::arch::detail
