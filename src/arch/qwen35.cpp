// qwen35 (Qwen3.5 / 3.6 dense: Qwen3_5ForCausalLM, and the text model of
// Qwen3_5ForConditionalGeneration; the vision tower is the mmproj's, src/arch/vision/
// qwen3vl_vision.cpp): llama.cpp's qwen35
// loader and graph (src/models/qwen35.cpp) as the converter's Qwen3_5TextModel ->
// _Qwen35MRopeMixin -> _LinearAttentionVReorderBase -> Qwen3NextModel -> _QwenMtpMixin ->
// Qwen2MoeModel -> TextModel chain (conversion/qwen.py) writes it.
// Layers of three kinds: linear attention (gated delta-net: attn_qkv, attn_gate, ssm_*), full
// attention (q_proj twice as wide, query and gate per head, written as it is) on every
// full_attention_interval-th layer (the loader's only rule), and the multi-token-prediction
// layers after the last one ("mtp.*", kept with nextn_predict_layers and block_count). Every
// "*norm.weight" but linear_attn.norm is written as weight + 1; A_log becomes ssm_a = -exp(A_log),
// dt_bias ssm_dt.bias, conv1d is squeezed (and kept F32); the value heads are reordered from
// grouped-by-key-head to tiled when the key and value head counts differ.
// qwen35moe (Qwen3.5 / 3.6 MoE: Qwen3_5MoeForCausalLM, and Qwen3_5MoeForConditionalGeneration's
// text model; llama.cpp's src/models/qwen35moe.cpp, the converter's Qwen3_5MoeTextModel on the
// same chain) is the same record with the feed-forward of every layer (the MTP ones too) a
// router, routed experts and a sigmoid-gated shared expert: per-expert mlp.experts.{e}.*
// stacked, MLX's switch_mlp, or transformers' fused mlp.experts.gate_up_proj [E, 2F, hidden]
// (split into gate and up halves) and mlp.experts.down_proj, as Qwen2MoeModel.modify_tensors
// reads them.
#include <string>

#include "gated_delta_net.hpp"

namespace rebox::arch::detail {

namespace qwen35_record {

using namespace gated_delta_net;

constexpr std::string_view kModelTypes[] = {"qwen3_5_text", "qwen3_5"};
// The vision tower (written to the mmproj file, HF's layout): HF's "model.visual.*", mlx-vlm's
// "vision_tower.*" (its sanitize renames model.visual; not read by the mmproj yet).
constexpr std::string_view kLeftOut[] = {"visual.", "vision_tower."};

// Every layer's attention half: gated full attention or gated delta-net with its value heads
// reordered (RowTransform::v_heads_*), then the norm after.
constexpr auto kHybridAttention = join(
    kGatedAttention, std::array{
                         matrix("linear_attn.in_proj_qkv", "attn_qkv", Dim::hidden,
                                Dim::lin_qkv_width, kLinearBit, RowTransform::v_heads_after_qk),
                         matrix("linear_attn.in_proj_z", "attn_gate", Dim::hidden, Dim::lin_v_width,
                                kLinearBit, RowTransform::v_heads_rows),
                         conv1d_row(RowTransform::v_heads_after_qk),
                         head_vector("linear_attn.dt_bias", "ssm_dt.bias", ValueTransform::none,
                                     RowTransform::v_heads_single),
                         head_vector("linear_attn.A_log", "ssm_a", ValueTransform::neg_exp,
                                     RowTransform::v_heads_single),
                         matrix("linear_attn.in_proj_b", "ssm_beta", Dim::hidden, Dim::lin_v_heads,
                                kLinearBit, RowTransform::v_heads_single),
                         matrix("linear_attn.in_proj_a", "ssm_alpha", Dim::hidden, Dim::lin_v_heads,
                                kLinearBit, RowTransform::v_heads_single),
                         ssm_norm_row(),
                         matrix("linear_attn.out_proj", "ssm_out", Dim::lin_v_width, Dim::hidden,
                                kLinearBit, RowTransform::v_heads_columns),
                         kPostAttentionPlusOne,
                     });
constexpr auto kLayer = join(kHybridAttention, dense_ffn(), kMtpHead);
constexpr auto kMoeLayer = join(kHybridAttention, kMoeFfn, kMtpHead);

// TextModel.set_gguf_parameters (block_count first; the M-RoPE sections when the rope parameters
// have them; the expert counts of a MoE; key/value length from head_dim), Qwen2MoeModel's expert
// widths (MoE), _QwenMtpMixin's nextn_predict_layers, Qwen3NextModel's ssm.* /
// full_attention_interval / rope.dimension_count, then _Qwen35MRopeMixin's default sections.
constexpr auto kHybridKvs =
    join(kLinearAttentionKvs, std::array{ArchKv::rope_dimension_sections_default});
constexpr auto kKvs =
    join(std::array{ArchKv::block_count, ArchKv::context_length, ArchKv::embedding_length,
                    ArchKv::feed_forward_length, ArchKv::head_count, ArchKv::head_count_kv,
                    ArchKv::rope_dimension_sections_given, ArchKv::rope_freq_base,
                    ArchKv::rms_epsilon, ArchKv::key_length_given, ArchKv::value_length_given},
         kHybridKvs);
// Qwen3.5 MoE's config.json has no intermediate_size: feed_forward_length only when it has one.
constexpr auto kMoeKvs =
    join(std::array{ArchKv::block_count, ArchKv::context_length, ArchKv::embedding_length,
                    ArchKv::feed_forward_length_given, ArchKv::head_count, ArchKv::head_count_kv,
                    ArchKv::rope_dimension_sections_given, ArchKv::rope_freq_base,
                    ArchKv::rms_epsilon, ArchKv::expert_count, ArchKv::expert_used_count,
                    ArchKv::key_length_given, ArchKv::value_length_given,
                    ArchKv::expert_feed_forward_length, ArchKv::expert_shared_feed_forward_length},
         kHybridKvs);

// transformers' Qwen3_5TextConfig defaults for the fields a config.json may leave out.
constexpr ConfigDefault kDefaults[] = {
    {"head_dim", "256"},
    {"linear_conv_kernel_dim", "4"},
    {"linear_key_head_dim", "128"},
    {"linear_value_head_dim", "128"},
    {"linear_num_key_heads", "16"},
    {"linear_num_value_heads", "32"},
};

constexpr Architecture qwen35_record(std::string_view gguf_arch,
                                     std::span<const std::string_view> model_types,
                                     std::span<const TensorSpec> layer,
                                     std::span<const ArchKv> kvs) {
    Architecture a = hybrid_record(gguf_arch, model_types, layer, kvs, kLeftOut, kDefaults);
    a.mlx_norms_shifted = true;  // qwen3_5.TextModel.sanitize adds the 1 (no MTP layers kept)
    return a;
}

constexpr Architecture kQwen35 = [] {
    Architecture a = qwen35_record("qwen35", kModelTypes, kLayer, kKvs);
    // qwen35.cpp applies the .scale of the FFN, the gated delta-net's projections, the MTP
    // head's eh_proj and the output besides attention.
    a.nvfp4_scales = {.output = true, .dense_ffn = true, .linear_attention = true, .nextn = true};
    return a;
}();

constexpr std::string_view kMoeModelTypes[] = {"qwen3_5_moe_text", "qwen3_5_moe"};
constexpr Architecture kQwen35Moe = [] {
    Architecture a = qwen35_record("qwen35moe", kMoeModelTypes, kMoeLayer, kMoeKvs);
    // qwen35moe.cpp applies the .scale of the routed and shared experts, the gated delta-net's
    // projections, eh_proj and the output besides attention.
    a.nvfp4_scales = {.output = true,
                      .experts = true,
                      .linear_attention = true,
                      .shared_experts = true,
                      .nextn = true};
    return a;
}();

}  // namespace qwen35_record

const Architecture& qwen35_architecture() { return qwen35_record::kQwen35; }
const Architecture& qwen35moe_architecture() { return qwen35_record::kQwen35Moe; }

}  // namespace rebox::arch::detail
