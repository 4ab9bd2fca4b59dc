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
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace qwen35_record {

using enum Presence;

// The layer kinds (ModelConfig::layer_kinds values) and their TensorSpec::kinds bits.
constexpr uint8_t kLinear = 0, kFull = 1, kMtp = 2;
constexpr uint8_t kLinearBit = 1u << kLinear, kAttentionBits = (1u << kFull) | (1u << kMtp),
                  kMtpBit = 1u << kMtp;

constexpr std::string_view kModelTypes[] = {"qwen3_5_text", "qwen3_5"};
// The vision tower (written to the mmproj file, HF's layout): HF's "model.visual.*", mlx-vlm's
// "vision_tower.*" (its sanitize renames model.visual; not read by the mmproj yet).
constexpr std::string_view kLeftOut[] = {"visual.", "vision_tower."};

// A (1 + w) RMSNorm [width]: written as weight + 1 in F32, on the layers `kinds` say.
constexpr TensorSpec plus_one_norm(std::string_view hf, std::string_view gguf, Dim width,
                                   uint8_t kinds = 0, Presence weight = required) {
    TensorSpec spec{hf, gguf, weight, absent, 1, {width}};
    spec.values = ValueTransform::add_one;
    spec.kinds = kinds;
    return spec;
}
// A [columns, rows] matrix on the layers `kinds` say, with a row transform.
constexpr TensorSpec matrix(std::string_view hf, std::string_view gguf, Dim columns, Dim rows,
                            uint8_t kinds, RowTransform transform = RowTransform::none,
                            Presence weight = required) {
    TensorSpec spec{hf, gguf, weight, absent, 2, {columns, rows}, transform};
    spec.kinds = kinds;
    return spec;
}
// A one-value-per-value-head vector without a ".weight" suffix (A_log, dt_bias).
constexpr TensorSpec head_vector(std::string_view hf, std::string_view gguf,
                                 ValueTransform values) {
    TensorSpec spec{
        hf, gguf, required, absent, 1, {Dim::lin_v_heads}, RowTransform::v_heads_single};
    spec.values = values;
    spec.kinds = kLinearBit;
    spec.bare = true;
    return spec;
}

constexpr TensorSpec kFirst[] = {kTokenEmbd};
// Every layer's attention half: the norms, then gated full attention or gated delta-net.
constexpr std::array kHybridAttention{
    plus_one_norm("input_layernorm", "attn_norm", Dim::hidden),
    // Full attention (and the MTP layers): gated q, k, v, o and the per-head norms.
    matrix("self_attn.q_proj", "attn_q", Dim::hidden, Dim::q_width_x2, kAttentionBits),
    matrix("self_attn.k_proj", "attn_k", Dim::hidden, Dim::kv_width, kAttentionBits),
    matrix("self_attn.v_proj", "attn_v", Dim::hidden, Dim::kv_width, kAttentionBits),
    matrix("self_attn.o_proj", "attn_output", Dim::q_width, Dim::hidden, kAttentionBits),
    plus_one_norm("self_attn.q_norm", "attn_q_norm", Dim::head_dim, kAttentionBits),
    plus_one_norm("self_attn.k_norm", "attn_k_norm", Dim::head_dim, kAttentionBits),
    // Linear attention (gated delta-net).
    matrix("linear_attn.in_proj_qkv", "attn_qkv", Dim::hidden, Dim::lin_qkv_width, kLinearBit,
           RowTransform::v_heads_after_qk),
    matrix("linear_attn.in_proj_z", "attn_gate", Dim::hidden, Dim::lin_v_width, kLinearBit,
           RowTransform::v_heads_rows),
    [] {
        TensorSpec spec = matrix("linear_attn.conv1d", "ssm_conv1d", Dim::lin_conv_width,
                                 Dim::lin_qkv_width, kLinearBit, RowTransform::v_heads_after_qk);
        spec.role = SourceRole::table_f32;  // the converter keeps SSM_CONV1D in F32
        spec.squeeze = true;
        return spec;
    }(),
    head_vector("linear_attn.dt_bias", "ssm_dt.bias", ValueTransform::none),
    head_vector("linear_attn.A_log", "ssm_a", ValueTransform::neg_exp),
    matrix("linear_attn.in_proj_b", "ssm_beta", Dim::hidden, Dim::lin_v_heads, kLinearBit,
           RowTransform::v_heads_single),
    matrix("linear_attn.in_proj_a", "ssm_alpha", Dim::hidden, Dim::lin_v_heads, kLinearBit,
           RowTransform::v_heads_single),
    [] {  // the gated RMSNorm over one value head: no + 1
        TensorSpec spec{"linear_attn.norm", "ssm_norm", required, absent, 1, {Dim::lin_v_head_dim}};
        spec.kinds = kLinearBit;
        return spec;
    }(),
    matrix("linear_attn.out_proj", "ssm_out", Dim::lin_v_width, Dim::hidden, kLinearBit,
           RowTransform::v_heads_columns),
    plus_one_norm("post_attention_layernorm", "post_attention_norm", Dim::hidden),
};
// The MTP head (mtp.fc, mtp.pre_fc_norm_*, mtp.norm, renamed by _QwenMtpMixin).
constexpr std::array kMtpHead{
    matrix("eh_proj", "nextn.eh_proj", Dim::hidden_x2, Dim::hidden, kMtpBit, RowTransform::none,
           optional),
    plus_one_norm("enorm", "nextn.enorm", Dim::hidden, kMtpBit, optional),
    plus_one_norm("hnorm", "nextn.hnorm", Dim::hidden, kMtpBit, optional),
    plus_one_norm("shared_head.norm", "nextn.shared_head_norm", Dim::hidden, kMtpBit, optional),
};
constexpr auto kLayer = join(kHybridAttention, dense_ffn(), kMtpHead);

// transformers' fused experts of one layer (no ".weight"), the alternative to the per-expert
// rows before them: gate_up_proj [E, 2F, hidden] is read twice, its gate half and its up half
// (split_parts); down_proj [E, hidden, F] as it is. Optional: the per-expert rows require them.
constexpr TensorSpec fused_experts(std::string_view hf, std::string_view gguf, bool down,
                                   RowTransform rows = RowTransform::none) {
    TensorSpec spec{hf,
                    gguf,
                    optional,
                    absent,
                    3,
                    down ? std::array{Dim::expert_ffn, Dim::hidden, Dim::experts}
                         : std::array{Dim::hidden, Dim::expert_ffn, Dim::experts},
                    rows};
    spec.hf_bare = true;
    return spec;
}
constexpr auto kMoeLayer = join(kHybridAttention, kQwenMoeFfn,
                                std::array{
                                    fused_experts("mlp.experts.gate_up_proj", "ffn_gate_exps",
                                                  false, RowTransform::first_half_rows),
                                    fused_experts("mlp.experts.gate_up_proj", "ffn_up_exps", false,
                                                  RowTransform::second_half_rows),
                                    fused_experts("mlp.experts.down_proj", "ffn_down_exps", true),
                                },
                                kQwenSharedExpert, kMtpHead);

constexpr TensorSpec kLast[] = {plus_one_norm("norm", "output_norm", Dim::hidden), output_row()};
constexpr std::pair<std::string_view, std::string_view> kMtpRenames[] = {
    {"mtp.fc", "eh_proj"},
    {"mtp.pre_fc_norm_embedding", "enorm"},
    {"mtp.pre_fc_norm_hidden", "hnorm"},
    {"mtp.norm", "shared_head.norm"},
};

// TextModel.set_gguf_parameters (block_count first; the M-RoPE sections when the rope parameters
// have them; the expert counts of a MoE; key/value length from head_dim), Qwen2MoeModel's expert
// widths (MoE), _QwenMtpMixin's nextn_predict_layers, Qwen3NextModel's ssm.* /
// full_attention_interval / rope.dimension_count, then _Qwen35MRopeMixin's default sections.
constexpr std::array kHybridKvs{
    ArchKv::nextn_predict_layers,
    ArchKv::ssm_conv_kernel,
    ArchKv::ssm_state_size,
    ArchKv::ssm_group_count,
    ArchKv::ssm_time_step_rank,
    ArchKv::ssm_inner_size,
    ArchKv::full_attention_interval,
    ArchKv::rope_dimension_count_partial,
    ArchKv::rope_dimension_sections_default,
};
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

// A positive count of config.json, at most `cap`.
uint32_t count_field(const nlohmann::json& root, const char* field, uint32_t fallback,
                     uint32_t cap) {
    const auto it = root.find(field);
    if (it == root.end() || it->is_null()) return fallback;
    if (!it->is_number_unsigned() || it->get<uint64_t>() == 0 || it->get<uint64_t>() > cap)
        throw_input_error("config.json", field, "is " + it->dump(),
                          "a whole number from 1 to " + std::to_string(cap));
    return static_cast<uint32_t>(it->get<uint64_t>());
}

// The loader's rule: layer i is full attention when (i + 1) % full_attention_interval == 0, else
// linear attention; the nextn_layers after them are MTP layers.
void qwen35_layer_kinds(ModelConfig& config) {
    config.layer_kinds.clear();
    const uint32_t interval = std::max<uint32_t>(config.full_attention_interval, 1);
    for (uint32_t i = 0; i < config.num_hidden_layers; ++i)
        config.layer_kinds.push_back((i + 1) % interval != 0 ? kLinear : kFull);
    config.layer_kinds.resize(config.num_hidden_layers + config.nextn_layers, kMtp);
}

// Qwen3NextModel's numbers, the MTP layer count, the rope parameters' partial factor and
// M-RoPE sections, and each layer's kind: the loader's (i + 1) % full_attention_interval rule
// (layer_types is checked against it in qwen35_checks).
void read_qwen35(const nlohmann::json& root, ModelConfig& config) {
    constexpr uint32_t kCap = 1u << 16;
    ModelConfig::LinearAttention l;
    l.conv_kernel = count_field(root, "linear_conv_kernel_dim", 4, 64);
    l.key_head_dim = count_field(root, "linear_key_head_dim", 128, kCap);
    l.value_head_dim = count_field(root, "linear_value_head_dim", 128, kCap);
    l.key_heads = count_field(root, "linear_num_key_heads", 16, kCap);
    l.value_heads = count_field(root, "linear_num_value_heads", 32, kCap);
    config.linear_attention = l;
    config.full_attention_interval = count_field(root, "full_attention_interval", 4, kCap);
    const auto mtp = root.find("mtp_num_hidden_layers");
    config.nextn_layers = mtp == root.end() || mtp->is_null() || *mtp == 0
                              ? 0
                              : count_field(root, "mtp_num_hidden_layers", 0, 64);
    const auto rope = root.find("rope_parameters");
    const nlohmann::json* params = rope != root.end() && rope->is_object() ? &*rope : nullptr;
    if (params && params->contains("partial_rotary_factor")) {
        const nlohmann::json& factor = (*params)["partial_rotary_factor"];
        if (!factor.is_number() || !(factor.get<double>() > 0.0 && factor.get<double>() <= 1.0))
            throw_input_error("config.json", "rope_parameters.partial_rotary_factor",
                              "is " + factor.dump(), "a number in (0, 1]");
        config.partial_rotary_factor = factor.get<double>();
    }
    config.rope_sections.clear();
    if (params && params->contains("mrope_section")) {
        const nlohmann::json& sections = (*params)["mrope_section"];
        if (!sections.is_array() || sections.size() > 4)
            throw_input_error("config.json", "rope_parameters.mrope_section",
                              "is " + sections.dump(), "up to 4 whole numbers");
        for (const nlohmann::json& s : sections) {
            if (!s.is_number_unsigned() || s.get<uint64_t>() > kCap)
                throw_input_error("config.json", "rope_parameters.mrope_section",
                                  "holds " + s.dump(), "whole numbers");
            config.rope_sections.push_back(static_cast<int32_t>(s.get<uint64_t>()));
        }
        config.rope_sections.resize(4, 0);  // TextModel pads [t, h, w] to 4
    }
    if (config.num_hidden_layers > kCap) return;  // refused by the caps after this hook
    qwen35_layer_kinds(config);
}

// What the converter or llama.cpp's qwen35 loader cannot take.
void qwen35_checks(const Architecture&, const ModelConfig& config,
                   std::vector<std::string>& problems) {
    const ModelConfig::LinearAttention l =
        config.linear_attention.value_or(ModelConfig::LinearAttention{});
    if (l.key_heads == 0 || l.value_heads % l.key_heads != 0)
        problems.push_back("linear_num_value_heads " + std::to_string(l.value_heads) +
                           " is not a multiple of linear_num_key_heads " +
                           std::to_string(l.key_heads) +
                           ": the value heads cannot be grouped under the key heads");
    if (l.key_head_dim != l.value_head_dim)
        problems.push_back("linear_key_head_dim " + std::to_string(l.key_head_dim) +
                           " differs from linear_value_head_dim " +
                           std::to_string(l.value_head_dim) +
                           ": llama.cpp's qwen35 loader sizes both from ssm.state_size");
    if (!config.layer_types.empty() && config.layer_types.size() != config.num_hidden_layers) {
        problems.push_back("layer_types has " + std::to_string(config.layer_types.size()) +
                           " entries for num_hidden_layers " +
                           std::to_string(config.num_hidden_layers));
        return;
    }
    for (size_t i = 0; i < config.layer_types.size(); ++i) {
        const bool full = (i + 1) % config.full_attention_interval == 0;
        const std::string& type = config.layer_types[i];
        if (type == (full ? "full_attention" : "linear_attention")) continue;
        problems.push_back("layer_types[" + std::to_string(i) + "] is '" + type +
                           "', but llama.cpp's qwen35 loader makes layer " + std::to_string(i) +
                           (full ? " full attention" : " linear attention") +
                           " (every full_attention_interval = " +
                           std::to_string(config.full_attention_interval) + "th layer is full)");
        return;
    }
}

// The hybrid layers' hooks, the MTP layers and the record's parts both architectures share.
constexpr Architecture hybrid_record(std::string_view gguf_arch,
                                     std::span<const std::string_view> model_types,
                                     std::span<const TensorSpec> layer,
                                     std::span<const ArchKv> kvs) {
    Architecture a{gguf_arch, model_types, kFirst, layer, kLast, kvs, {}, kLeftOut, kDefaults};
    a.finish_config = read_qwen35;
    a.set_layer_kinds = qwen35_layer_kinds;
    a.config_checks = qwen35_checks;
    a.mtp_layer_prefix = "mtp.layers.";
    a.mtp_renames = kMtpRenames;
    a.mlx_norms_shifted = true;  // qwen3_5.TextModel.sanitize adds the 1 (no MTP layers kept)
    return a;
}

constexpr Architecture kQwen35 = [] {
    Architecture a = hybrid_record("qwen35", kModelTypes, kLayer, kKvs);
    // qwen35.cpp applies the .scale of the FFN, the gated delta-net's projections, the MTP
    // head's eh_proj and the output besides attention.
    a.nvfp4_scales = {.output = true, .dense_ffn = true, .linear_attention = true, .nextn = true};
    return a;
}();

constexpr std::string_view kMoeModelTypes[] = {"qwen3_5_moe_text", "qwen3_5_moe"};
constexpr Architecture kQwen35Moe = [] {
    Architecture a = hybrid_record("qwen35moe", kMoeModelTypes, kMoeLayer, kMoeKvs);
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
