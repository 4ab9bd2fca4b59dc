// gemma (Gemma 1): llama.cpp's gemma graph (docs/architectures.md "gemma"). Every RMSNorm weight
// is written as weight + 1 in F32 (GemmaModel.modify_tensors); the output is always tied to
// token_embd (llama.cpp's gemma loader has no output.weight, the converter drops lm_head); the
// converter writes no rope.freq_base (the loader's default 10000 is Gemma's theta).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"gemma"};
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
};
constexpr TensorSpec kLast[] = {kGemmaOutputNorm};
// GemmaModel.set_gguf_parameters, in its order.
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,      ArchKv::embedding_length, ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,       ArchKv::head_count_kv,
    ArchKv::rms_epsilon,         ArchKv::key_length,       ArchKv::value_length,
};

constexpr Architecture kGemma{"gemma", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};

}  // namespace

const Architecture& gemma_architecture() { return kGemma; }

}  // namespace rebox::arch::detail
