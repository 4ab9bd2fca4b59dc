// qwen3 (Qwen3, Qwen3-Embedding): llama.cpp's qwen3 graph (docs/gguf.md §3.2): per-head q/k
// RMSNorms, no biases, NEOX rope (no row permutation).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"qwen3"};
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
    {"mlp.gate_proj", "ffn_gate", required, absent, 2, {hidden, ffn}},
    {"mlp.up_proj", "ffn_up", required, absent, 2, {hidden, ffn}},
    {"mlp.down_proj", "ffn_down", required, absent, 2, {ffn, hidden}},
};
constexpr TensorSpec kLast[] = {
    kOutputNorm,
    {"lm_head", "output", required_unless_tied, absent, 2, {hidden, vocab}},
};
// Qwen3's head_dim (128) differs from hidden/heads (1024/16): key/value length are explicit.
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,      ArchKv::embedding_length,     ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,           ArchKv::head_count_kv,
    ArchKv::rope_freq_base,      ArchKv::rms_epsilon,          ArchKv::key_length,
    ArchKv::value_length,        ArchKv::rope_dimension_count,
};

constexpr Architecture kQwen3{"qwen3", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};

}  // namespace

const Architecture& qwen3_architecture() { return kQwen3; }

}  // namespace rebox::arch::detail
