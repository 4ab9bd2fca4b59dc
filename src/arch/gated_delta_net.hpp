// The rows, hooks and record parts the gated delta-net families share: qwen35 / qwen35moe
// (qwen35.cpp) and qwen3next (qwen3next.cpp), all converted by llama.cpp's Qwen3NextModel ->
// _QwenMtpMixin -> Qwen2MoeModel chain: the (1 + w) norms written as weight + 1, the layer kinds
// from full_attention_interval, the MTP layers after the last one ("mtp.*"), the linear-attention
// KVs and transformers' fused experts.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch_tables.hpp"

namespace rebox::arch::detail::gated_delta_net {

// The layer kinds (ModelConfig::layer_kinds values) and their TensorSpec::kinds bits.
constexpr uint8_t kLinear = 0, kFull = 1, kMtp = 2;
constexpr uint8_t kLinearBit = 1u << kLinear, kAttentionBits = (1u << kFull) | (1u << kMtp),
                  kMtpBit = 1u << kMtp;

// A (1 + w) RMSNorm [width]: written as weight + 1 in F32, on the layers `kinds` say.
constexpr TensorSpec plus_one_norm(std::string_view hf, std::string_view gguf, Dim width,
                                   uint8_t kinds = 0, Presence weight = Presence::required) {
    TensorSpec spec{hf, gguf, weight, Presence::absent, 1, {width}};
    spec.values = ValueTransform::add_one;
    spec.kinds = kinds;
    return spec;
}
// A [columns, rows] matrix on the layers `kinds` say, with a row transform.
constexpr TensorSpec matrix(std::string_view hf, std::string_view gguf, Dim columns, Dim rows,
                            uint8_t kinds, RowTransform transform = RowTransform::none,
                            Presence weight = Presence::required) {
    TensorSpec spec{hf, gguf, weight, Presence::absent, 2, {columns, rows}, transform};
    spec.kinds = kinds;
    return spec;
}
// A one-value-per-value-head vector without a ".weight" suffix (A_log, dt_bias).
constexpr TensorSpec head_vector(std::string_view hf, std::string_view gguf, ValueTransform values,
                                 RowTransform transform) {
    TensorSpec spec{hf,       gguf, Presence::required, Presence::absent, 1, {Dim::lin_v_heads},
                    transform};
    spec.values = values;
    spec.kinds = kLinearBit;
    spec.bare = true;
    return spec;
}
// conv1d [channels, 1, kernel], squeezed to ne {kernel, channels} and kept F32 as the converter
// keeps SSM_CONV1D.
constexpr TensorSpec conv1d_row(RowTransform transform) {
    TensorSpec spec = matrix("linear_attn.conv1d", "ssm_conv1d", Dim::lin_conv_width,
                             Dim::lin_qkv_width, kLinearBit, transform);
    spec.role = SourceRole::table_f32;
    spec.squeeze = true;
    return spec;
}
// The gated RMSNorm over one value head (linear_attn.norm): no + 1.
constexpr TensorSpec ssm_norm_row() {
    TensorSpec spec{"linear_attn.norm", "ssm_norm", Presence::required,
                    Presence::absent,   1,          {Dim::lin_v_head_dim}};
    spec.kinds = kLinearBit;
    return spec;
}

// Full attention (and the MTP layers): the norm before, gated q (twice as wide: query and gate per
// head), k, v, o and the per-head norms.
inline constexpr std::array kGatedAttention{
    plus_one_norm("input_layernorm", "attn_norm", Dim::hidden),
    matrix("self_attn.q_proj", "attn_q", Dim::hidden, Dim::q_width_x2, kAttentionBits),
    matrix("self_attn.k_proj", "attn_k", Dim::hidden, Dim::kv_width, kAttentionBits),
    matrix("self_attn.v_proj", "attn_v", Dim::hidden, Dim::kv_width, kAttentionBits),
    matrix("self_attn.o_proj", "attn_output", Dim::q_width, Dim::hidden, kAttentionBits),
    plus_one_norm("self_attn.q_norm", "attn_q_norm", Dim::head_dim, kAttentionBits),
    plus_one_norm("self_attn.k_norm", "attn_k_norm", Dim::head_dim, kAttentionBits),
};
inline constexpr TensorSpec kPostAttentionPlusOne =
    plus_one_norm("post_attention_layernorm", "post_attention_norm", Dim::hidden);

// The MTP head (mtp.fc, mtp.pre_fc_norm_*, mtp.norm, renamed by _QwenMtpMixin).
inline constexpr std::array kMtpHead{
    matrix("eh_proj", "nextn.eh_proj", Dim::hidden_x2, Dim::hidden, kMtpBit, RowTransform::none,
           Presence::optional),
    plus_one_norm("enorm", "nextn.enorm", Dim::hidden, kMtpBit, Presence::optional),
    plus_one_norm("hnorm", "nextn.hnorm", Dim::hidden, kMtpBit, Presence::optional),
    plus_one_norm("shared_head.norm", "nextn.shared_head_norm", Dim::hidden, kMtpBit,
                  Presence::optional),
};
inline constexpr std::pair<std::string_view, std::string_view> kMtpRenames[] = {
    {"mtp.fc", "eh_proj"},
    {"mtp.pre_fc_norm_embedding", "enorm"},
    {"mtp.pre_fc_norm_hidden", "hnorm"},
    {"mtp.norm", "shared_head.norm"},
};

// transformers' fused experts of one layer (no ".weight"), the alternative to the per-expert
// rows before them: gate_up_proj [E, 2F, hidden] is read twice, its gate half and its up half
// (split_parts); down_proj [E, hidden, F] as it is. Optional: the per-expert rows require them.
constexpr TensorSpec fused_experts(std::string_view hf, std::string_view gguf, bool down,
                                   RowTransform rows = RowTransform::none) {
    TensorSpec spec{hf,
                    gguf,
                    Presence::optional,
                    Presence::absent,
                    3,
                    down ? std::array{Dim::expert_ffn, Dim::hidden, Dim::experts}
                         : std::array{Dim::hidden, Dim::expert_ffn, Dim::experts},
                    rows};
    spec.hf_bare = true;
    return spec;
}
// Qwen2MoeModel's MoE feed-forward: router, per-expert / MLX-stacked / transformers-fused experts,
// and the sigmoid-gated shared expert.
inline constexpr auto kMoeFfn =
    join(kQwenMoeFfn,
         std::array{
             fused_experts("mlp.experts.gate_up_proj", "ffn_gate_exps", false,
                           RowTransform::first_half_rows),
             fused_experts("mlp.experts.gate_up_proj", "ffn_up_exps", false,
                           RowTransform::second_half_rows),
             fused_experts("mlp.experts.down_proj", "ffn_down_exps", true),
         },
         kQwenSharedExpert);

// _QwenMtpMixin's nextn_predict_layers, then Qwen3NextModel's ssm.* / full_attention_interval /
// rope.dimension_count: the KVs after TextModel's and Qwen2MoeModel's.
inline constexpr std::array kLinearAttentionKvs{
    ArchKv::nextn_predict_layers,    ArchKv::ssm_conv_kernel,
    ArchKv::ssm_state_size,          ArchKv::ssm_group_count,
    ArchKv::ssm_time_step_rank,      ArchKv::ssm_inner_size,
    ArchKv::full_attention_interval, ArchKv::rope_dimension_count_partial,
};

inline constexpr TensorSpec kLastRows[] = {plus_one_norm("norm", "output_norm", Dim::hidden),
                                           output_row()};

// Qwen3NextModel's numbers (transformers' defaults when absent), config.json's MTP layer count,
// the rope parameters' partial factor and M-RoPE sections, and each layer's kind.
void read_linear_attention(const nlohmann::json& root, ModelConfig& config);
// The loader's rule: layer i is full attention when (i + 1) % full_attention_interval == 0, else
// linear attention; the nextn_layers after them are MTP layers.
void linear_attention_layer_kinds(ModelConfig& config);
// What the converter or the family's llama.cpp loader cannot take: value heads not grouped under
// the key heads, unequal key and value head dims, a layer_types against the interval.
void linear_attention_checks(const Architecture& arch, const ModelConfig& config,
                             std::vector<std::string>& problems);

// The record's hooks and parts every gated delta-net family shares.
constexpr Architecture hybrid_record(std::string_view gguf_arch,
                                     std::span<const std::string_view> model_types,
                                     std::span<const TensorSpec> layer, std::span<const ArchKv> kvs,
                                     std::span<const std::string_view> left_out,
                                     std::span<const ConfigDefault> defaults) {
    Architecture a{gguf_arch, model_types, std::span<const TensorSpec>(&kTokenEmbd, 1),
                   layer,     kLastRows,   kvs,
                   {},        left_out,    defaults};
    a.finish_config = read_linear_attention;
    a.set_layer_kinds = linear_attention_layer_kinds;
    a.config_checks = linear_attention_checks;
    a.mtp_layer_prefix = "mtp.layers.";
    a.mtp_renames = kMtpRenames;
    a.supports_no_mtp = true;  // _QwenMtpMixin
    return a;
}

}  // namespace rebox::arch::detail::gated_delta_net
