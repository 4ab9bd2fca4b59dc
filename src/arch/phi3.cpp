// phi3 (Phi-3, Phi-3.5, Phi-4 and Phi-4-mini: config model_type "phi3"): llama.cpp's phi3 graph
// (docs/architectures.md). Fused tensors stay fused as llama.cpp's converter leaves them: q, k, v
// in one attn_qkv (q rows, then k, then v) and gate, up in one ffn_up (gate rows first; no
// ffn_gate). NeoX rope, so no row moves. Long-context configs ("longrope"/"su") add the F32
// rope_factors_long/short tensors from config.json.
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace phi3_record {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"phi3"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
// llama.cpp's phi3 loader: attn_qkv (with an optional bias) or split q/k/v; rebox writes the
// fused form every Phi-3 checkpoint has. ffn_up holds 2 * n_ff rows. attn_output is {n_embd,
// n_embd}: the loader takes the head size as hidden/heads (the converter writes no key_length), so
// a config.json head_dim with heads * head_dim != hidden_size is refused on o_proj.
constexpr TensorSpec kLayer[] = {
    kAttnNorm,
    {"self_attn.qkv_proj", "attn_qkv", required, optional, 2, {hidden, qkv_width}},
    {"self_attn.o_proj", "attn_output", required, absent, 2, {hidden, hidden}},
    kFfnNorm,
    {"mlp.gate_up_proj", "ffn_up", required, absent, 2, {hidden, ffn_x2}},
    {"mlp.down_proj", "ffn_down", required, absent, 2, {ffn, hidden}},
};
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};
// Phi3MiniModel.set_gguf_parameters, in its order (it does not call the base class's): no
// key/value length and no vocab_size; sliding_window always (0 when config.json has none).
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,
    ArchKv::rope_scaling_original_context_length,
    ArchKv::embedding_length,
    ArchKv::feed_forward_length,
    ArchKv::block_count,
    ArchKv::head_count,
    ArchKv::head_count_kv,
    ArchKv::rms_epsilon,
    ArchKv::rope_dimension_count_rotary,
    ArchKv::rope_freq_base,
    ArchKv::sliding_window_or_zero,
};
// Phi3MiniModel.generate_extra_tensors yields long, then short.
constexpr ExtraTensor kExtras[] = {ExtraTensor::rope_factors_long, ExtraTensor::rope_factors_short};

constexpr Architecture kPhi3 = [] {
    Architecture a{"phi3", kModelTypes, kFirst, kLayer, kLast, kKvs, kExtras};
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace phi3_record

const Architecture& phi3_architecture() { return phi3_record::kPhi3; }

}  // namespace rebox::arch::detail
