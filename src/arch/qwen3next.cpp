// qwen3next (Qwen3-Next-80B-A3B: Qwen3NextForCausalLM): llama.cpp's qwen3next loader and graph
// (src/models/qwen3next.cpp) as the converter's Qwen3NextModel -> _QwenMtpMixin -> Qwen2MoeModel
// -> TextModel chain (conversion/qwen.py) writes it. The gated delta-net layers of qwen35 with
// three differences: the fused in_proj_qkvz, stored per key head as [q, k, v, z], is split into
// attn_qkv (every q, then every k, then every v) and attn_gate (every z); in_proj_ba goes to
// ssm_ba as it is; and the value heads stay grouped by key head (no reorder: the qwen3next graph
// repeats the key heads itself). Every layer, the MTP ones too, has Qwen2MoeModel's MoE
// feed-forward with the sigmoid-gated shared expert. config.json has no mtp_num_hidden_layers: the
// converter counts the checkpoint's "mtp.layers.K" (the plan does the same).
#include "gated_delta_net.hpp"

namespace rebox::arch::detail {
namespace qwen3next_record {

using namespace gated_delta_net;

constexpr std::string_view kModelTypes[] = {"qwen3_next"};

constexpr auto kLayer = join(
    kGatedAttention,
    std::array{
        matrix("linear_attn.in_proj_qkvz", "attn_qkv", Dim::hidden, Dim::lin_qkv_width, kLinearBit,
               RowTransform::qkvz_qkv),
        matrix("linear_attn.in_proj_qkvz", "attn_gate", Dim::hidden, Dim::lin_v_width, kLinearBit,
               RowTransform::qkvz_z),
        matrix("linear_attn.in_proj_ba", "ssm_ba", Dim::hidden, Dim::lin_v_heads_x2, kLinearBit),
        conv1d_row(RowTransform::none),
        head_vector("linear_attn.dt_bias", "ssm_dt.bias", ValueTransform::none, RowTransform::none),
        head_vector("linear_attn.A_log", "ssm_a", ValueTransform::neg_exp, RowTransform::none),
        ssm_norm_row(),
        matrix("linear_attn.out_proj", "ssm_out", Dim::lin_v_width, Dim::hidden, kLinearBit),
        kPostAttentionPlusOne,
    },
    kMoeFfn, kMtpHead);

// TextModel.set_gguf_parameters (block_count with the MTP layers; feed_forward_length from
// intermediate_size; the expert counts; key/value length from head_dim), Qwen2MoeModel's expert
// widths, _QwenMtpMixin's nextn_predict_layers, Qwen3NextModel's ssm.* / full_attention_interval /
// rope.dimension_count (no M-RoPE sections: that is _Qwen35MRopeMixin's).
constexpr auto kKvs =
    join(std::array{ArchKv::block_count, ArchKv::context_length, ArchKv::embedding_length,
                    ArchKv::feed_forward_length_given, ArchKv::head_count, ArchKv::head_count_kv,
                    ArchKv::rope_freq_base, ArchKv::rms_epsilon, ArchKv::expert_count,
                    ArchKv::expert_used_count, ArchKv::key_length_given, ArchKv::value_length_given,
                    ArchKv::expert_feed_forward_length, ArchKv::expert_shared_feed_forward_length},
         kLinearAttentionKvs);

// transformers' Qwen3NextConfig defaults for the fields a config.json may leave out.
constexpr ConfigDefault kDefaults[] = {
    {"head_dim", "256"},
    {"linear_conv_kernel_dim", "4"},
    {"linear_key_head_dim", "128"},
    {"linear_value_head_dim", "128"},
    {"linear_num_key_heads", "16"},
    {"linear_num_value_heads", "32"},
    {"moe_intermediate_size", "512"},
    {"shared_expert_intermediate_size", "512"},
    {"num_experts_per_tok", "10"},
    {"num_experts", "512"},
};

constexpr Architecture kQwen3Next = [] {
    Architecture a = hybrid_record("qwen3next", kModelTypes, kLayer, kKvs, {}, kDefaults);
    a.mlx_norms_shifted = true;  // qwen3_next.Model.sanitize adds the 1 (and drops "mtp.*")
    // qwen3next.cpp applies the .scale of the routed and shared experts, eh_proj and the output
    // besides attention; not the gated delta-net's projections (unlike qwen35).
    a.nvfp4_scales = {.output = true, .experts = true, .shared_experts = true, .nextn = true};
    return a;
}();

}  // namespace qwen3next_record

const Architecture& qwen3next_architecture() { return qwen3next_record::kQwen3Next; }

}  // namespace rebox::arch::detail
