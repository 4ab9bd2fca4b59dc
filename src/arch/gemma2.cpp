// gemma2 (Gemma 2): llama.cpp's gemma2 graph (docs/architectures.md "gemma"). Four RMSNorms per
// layer (attention in/out, feed-forward in/out), each written as weight + 1 in F32
// (Gemma2Model.modify_tensors); output tied to token_embd (no output.weight in the loader); the
// attention/final logit softcapping and sliding_window KVs.
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"gemma2"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr TensorSpec kLayer[] = {
    {"input_layernorm",
     "attn_norm",
     required,
     absent,
     1,
     {hidden},
     RowTransform::none,
     SourceRole::plain,
     {},
     ValueTransform::add_one},
    {"self_attn.q_proj", "attn_q", required, absent, 2, {hidden, q_width}},
    {"self_attn.k_proj", "attn_k", required, absent, 2, {hidden, kv_width}},
    {"self_attn.v_proj", "attn_v", required, absent, 2, {hidden, kv_width}},
    {"self_attn.o_proj", "attn_output", required, absent, 2, {q_width, hidden}},
    {"post_attention_layernorm",
     "post_attention_norm",
     required,
     absent,
     1,
     {hidden},
     RowTransform::none,
     SourceRole::plain,
     {},
     ValueTransform::add_one},
    {"pre_feedforward_layernorm",
     "ffn_norm",
     required,
     absent,
     1,
     {hidden},
     RowTransform::none,
     SourceRole::plain,
     {},
     ValueTransform::add_one},
    {"mlp.gate_proj", "ffn_gate", required, absent, 2, {hidden, ffn}},
    {"mlp.up_proj", "ffn_up", required, absent, 2, {hidden, ffn}},
    {"mlp.down_proj", "ffn_down", required, absent, 2, {ffn, hidden}},
    {"post_feedforward_layernorm",
     "post_ffw_norm",
     required,
     absent,
     1,
     {hidden},
     RowTransform::none,
     SourceRole::plain,
     {},
     ValueTransform::add_one},
};
constexpr TensorSpec kLast[] = {kGemmaOutputNorm};
// Gemma2Model.set_gguf_parameters, in its order.
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,
    ArchKv::embedding_length,
    ArchKv::block_count,
    ArchKv::feed_forward_length,
    ArchKv::head_count,
    ArchKv::head_count_kv,
    ArchKv::rms_epsilon,
    ArchKv::key_length,
    ArchKv::value_length,
    ArchKv::attn_logit_softcapping,
    ArchKv::final_logit_softcapping,
    ArchKv::sliding_window,
};

constexpr Architecture kGemma2{"gemma2", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};

}  // namespace

const Architecture& gemma2_architecture() { return kGemma2; }

}  // namespace rebox::arch::detail
