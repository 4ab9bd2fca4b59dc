// verify's qwen35 (Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration's text model; converter
// class Qwen3_5TextModel, llama.cpp's src/models/qwen35.cpp), written from the converter and the
// loader: layer i is full attention when (i + 1) % full_attention_interval == 0, else linear
// attention (gated delta-net); the mtp_num_hidden_layers layers after the last ("mtp.layers.K.*",
// and the MTP head "mtp.fc" / "mtp.pre_fc_norm_*" / "mtp.norm") are full-attention layers with the
// head. Shapes in HF order: q_proj holds the query and its gate ([2 * heads * head_dim, hidden]),
// in_proj_qkv [2 * key heads * key dim + value heads * value dim, hidden], conv1d [that, 1,
// kernel], A_log / dt_bias [value heads], linear_attn.norm [value dim]. Transforms: every norm but
// ssm_norm + 1, the value-head reorder, -exp(A_log), conv1d squeezed (ref_transforms.cpp).
// verify's qwen35moe (Qwen3_5MoeForCausalLM, Qwen3_5MoeForConditionalGeneration's text model;
// Qwen3_5MoeTextModel, src/models/qwen35moe.cpp): the same layers with a MoE feed-forward in every
// one, the MTP layers too: router mlp.gate [experts, hidden], experts per expert ([moe_ffn,
// hidden], down [hidden, moe_ffn]), MLX-stacked or transformers-fused (gate_up_proj [experts,
// 2 * moe_ffn, hidden] read as its two halves, down_proj [experts, hidden, moe_ffn]), the shared
// expert ([shared_ffn, hidden]) and its gate [1, hidden]; no intermediate_size in config.json
// (no feed_forward_length KV), expert_count / expert_used_count / expert widths.
#include <string>

#include "rebox/error.hpp"
#include "verify/arch/expected_shapes.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/arch/ref_qwen35_parts.hpp"
#include "verify/metadata/kv_checker.hpp"

namespace rebox::verify_ref::detail {
namespace qwen35_ref {

constexpr RefKv kQwen35Kvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon,
                                RefKv::head_dim_lengths_given};

// A whole number of config.json within [1, cap]; `fallback` when absent (transformers'
// Qwen3_5TextConfig default).
uint32_t qwen35_count(const nlohmann::json& root, const char* key, uint32_t fallback,
                      uint32_t cap) {
    const auto it = root.find(key);
    if (it == root.end() || it->is_null()) return fallback;
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > cap)
        throw_input_error("config.json", key, "is " + it->dump(),
                          "a whole number from 1 to " + std::to_string(cap));
    return static_cast<uint32_t>(it->get<int64_t>());
}

void qwen35_defaults(nlohmann::json& root) {
    if (!root.contains("head_dim") || root["head_dim"].is_null()) root["head_dim"] = 256;
}

void qwen35_config(const nlohmann::json& root, RefConfig& c) {
    RefConfig::LinearAttention l;
    l.conv_kernel = qwen35_count(root, "linear_conv_kernel_dim", 4, 64);
    l.key_head_dim = qwen35_count(root, "linear_key_head_dim", 128, kMaxHeadDim);
    l.value_head_dim = qwen35_count(root, "linear_value_head_dim", 128, kMaxHeadDim);
    l.key_heads = qwen35_count(root, "linear_num_key_heads", 16, kMaxHeads);
    l.value_heads = qwen35_count(root, "linear_num_value_heads", 32, kMaxHeads);
    c.linear = l;
    c.full_attention_interval = qwen35_count(root, "full_attention_interval", 4, kMaxLayers);
    const auto mtp = root.find("mtp_num_hidden_layers");
    c.mtp_layers = mtp != root.end() && mtp->is_number_integer() && *mtp == 0
                       ? 0
                       : qwen35_count(root, "mtp_num_hidden_layers", 0, 64);
    // Qwen3NextModel reads the partial factor from the rope parameters (TextModel copies a
    // top-level one there when they have none), 0.25 when neither has it.
    const auto params = root.find("rope_parameters");
    if (params != root.end() && params->is_object()) {
        if (const auto f = params->find("partial_rotary_factor");
            f != params->end() && f->is_number())
            c.partial_rotary_factor = f->get<double>();
        if (const auto s = params->find("mrope_section"); s != params->end()) {
            if (!s->is_array() || s->size() > 4)
                throw_input_error("config.json", "rope_parameters.mrope_section", "is " + s->dump(),
                                  "up to 4 whole numbers");
            for (const nlohmann::json& n : *s) {
                if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() > 65536)
                    throw_input_error("config.json", "rope_parameters.mrope_section",
                                      "holds " + n.dump(), "whole numbers");
                c.mrope_section.push_back(n.get<int64_t>());
            }
        }
    }
}

// "layers.N.REST" with N < the main layers, or "mtp.layers.K.REST": REST and whether the layer is
// full attention (MTP layers are); false for other names.
bool qwen35_layer(const RefConfig& c, std::string_view name, std::string_view* rest, bool* full) {
    bool mtp = false;
    if (name.starts_with("mtp.layers.")) {
        name.remove_prefix(11);
        mtp = true;
    } else if (name.starts_with("layers.")) {
        name.remove_prefix(7);
    } else {
        return false;
    }
    const size_t dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0) return false;
    uint64_t layer = 0;
    for (size_t i = 0; i < dot; ++i) {
        if (name[i] < '0' || name[i] > '9' || layer > (uint64_t{1} << 32)) return false;
        layer = layer * 10 + uint64_t(name[i] - '0');
    }
    *rest = name.substr(dot + 1);
    *full = mtp || (c.full_attention_interval != 0 && (layer + 1) % c.full_attention_interval == 0);
    return true;
}

std::optional<std::vector<int64_t>> qwen35_shape(const RefConfig& c, std::string_view name) {
    using Shape = std::vector<int64_t>;
    const int64_t hidden = c.hidden_size;
    const int64_t q2 = 2 * static_cast<int64_t>(c.num_attention_heads) * c.head_dim;
    if (name == "mtp.fc.weight") return Shape{hidden, 2 * hidden};
    if (name == "mtp.pre_fc_norm_embedding.weight" || name == "mtp.pre_fc_norm_hidden.weight" ||
        name == "mtp.norm.weight")
        return Shape{hidden};
    std::string_view rest;
    bool full = false;
    if (!qwen35_layer(c, name, &rest, &full)) return std::nullopt;
    const RefConfig::LinearAttention l = c.linear.value_or(RefConfig::LinearAttention{});
    const int64_t v_width = int64_t{l.value_heads} * l.value_head_dim;
    const int64_t conv = 2 * int64_t{l.key_heads} * l.key_head_dim + v_width;
    // A tensor of the other kind of layer: a shape no source tensor has.
    const Shape wrong_kind{0};
    if (name.starts_with("mtp.")) {  // the decoder table knows "layers.N." names only
        const int64_t kv = static_cast<int64_t>(c.num_key_value_heads) * c.head_dim;
        const int64_t q = q2 / 2, ffn = c.intermediate_size;
        if (rest == "input_layernorm.weight" || rest == "post_attention_layernorm.weight")
            return Shape{hidden};
        if (rest == "self_attn.k_proj.weight" || rest == "self_attn.v_proj.weight")
            return Shape{kv, hidden};
        if (rest == "self_attn.o_proj.weight") return Shape{hidden, q};
        if (rest == "self_attn.q_norm.weight" || rest == "self_attn.k_norm.weight")
            return Shape{int64_t{c.head_dim}};
        if (rest == "mlp.gate_proj.weight" || rest == "mlp.up_proj.weight")
            return Shape{ffn, hidden};
        if (rest == "mlp.down_proj.weight") return Shape{hidden, ffn};
    }
    if (rest.starts_with("self_attn.")) {
        if (!full) return wrong_kind;
        if (rest == "self_attn.q_proj.weight") return Shape{q2, hidden};
        return std::nullopt;  // k / v / o / norms: the decoder table's
    }
    if (!rest.starts_with("linear_attn.")) return std::nullopt;
    if (full) return wrong_kind;
    if (rest == "linear_attn.in_proj_qkv.weight") return Shape{conv, hidden};
    if (rest == "linear_attn.in_proj_z.weight") return Shape{v_width, hidden};
    if (rest == "linear_attn.in_proj_a.weight" || rest == "linear_attn.in_proj_b.weight")
        return Shape{int64_t{l.value_heads}, hidden};
    if (rest == "linear_attn.conv1d.weight") return Shape{conv, 1, int64_t{l.conv_kernel}};
    if (rest == "linear_attn.A_log" || rest == "linear_attn.dt_bias")
        return Shape{int64_t{l.value_heads}};
    if (rest == "linear_attn.norm.weight") return Shape{int64_t{l.value_head_dim}};
    if (rest == "linear_attn.out_proj.weight") return Shape{hidden, v_width};
    return wrong_kind;
}

// The MoE feed-forward of any layer (REST after "layers.N." or "mtp.layers.K."), HF order: the
// stacked experts under the names verify gives transformers' fused halves, else the decoders'
// MoE shapes; nullopt for other names.
std::optional<std::vector<int64_t>> qwen35moe_ffn_shape(const RefConfig& c, std::string_view rest) {
    const int64_t hidden = c.hidden_size, experts = c.num_experts;
    const int64_t moe_ffn = c.moe_intermediate_size.value_or(0);
    if (rest == "mlp.experts.gate_proj.weight" || rest == "mlp.experts.up_proj.weight")
        return std::vector<int64_t>{experts, moe_ffn, hidden};
    if (rest == "mlp.experts.down_proj.weight")
        return std::vector<int64_t>{experts, hidden, moe_ffn};
    return expected_moe_shape(c, rest);
}

std::optional<std::vector<int64_t>> qwen35moe_shape(const RefConfig& c, std::string_view name) {
    std::string_view rest;
    bool full = false;
    if (qwen35_layer(c, name, &rest, &full) && rest.starts_with("mlp.")) {
        if (rest == "mlp.gate_proj.weight" || rest == "mlp.up_proj.weight" ||
            rest == "mlp.down_proj.weight")
            return std::vector<int64_t>{0};  // a dense feed-forward: a shape no source has
        return qwen35moe_ffn_shape(c, rest);
    }
    return qwen35_shape(c, name);
}

// What _QwenMtpMixin and Qwen3NextModel add to TextModel's KVs (qwen3next's own check_kvs).
void check_qwen3next_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    if (config.mtp_layers != 0)
        kv.expect_u32(arch + ".nextn_predict_layers", config.mtp_layers);
    else
        kv.expect_absent(arch + ".nextn_predict_layers", "no mtp_num_hidden_layers");
    const RefConfig::LinearAttention l = config.linear.value_or(RefConfig::LinearAttention{});
    kv.expect_u32(arch + ".ssm.conv_kernel", l.conv_kernel);
    kv.expect_u32(arch + ".ssm.state_size", l.key_head_dim);
    kv.expect_u32(arch + ".ssm.group_count", l.key_heads);
    kv.expect_u32(arch + ".ssm.time_step_rank", l.value_heads);
    kv.expect_u32(arch + ".ssm.inner_size", uint64_t{l.value_head_dim} * l.value_heads);
    kv.expect_u32(arch + ".full_attention_interval", config.full_attention_interval);
    // int(rope_dim * factor) in Python: the product of two doubles, truncated.
    kv.expect_u32(arch + ".rope.dimension_count",
                  static_cast<uint64_t>(double(config.head_dim) *
                                        config.partial_rotary_factor.value_or(0.25)));
}

// qwen35: those, then _Qwen35MRopeMixin's sections ([11, 11, 10, 0] when config.json has none).
void check_linear_attention_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    check_qwen3next_kvs(kv, arch, config);
    std::vector<int64_t> sections = config.mrope_section;
    if (sections.empty()) sections = {11, 11, 10, 0};
    sections.resize(4, 0);
    check_numbers(kv, arch + ".rope.dimension_sections", GgufType::INT32, sections);
}

}  // namespace qwen35_ref

const RefArch& ref_qwen35() {
    using namespace qwen35_ref;
    static constexpr std::string_view kModelTypes[] = {"qwen3_5_text", "qwen3_5"};
    static const RefArch kArch{.gguf_arch = "qwen35",
                               .model_types = kModelTypes,
                               .prepare_config = qwen35_defaults,
                               .finish_config = qwen35_config,
                               .shape = qwen35_shape,
                               .kvs = kQwen35Kvs,
                               .check_kvs = check_linear_attention_kvs,
                               .norm_plus_one = true,
                               .mlx_norms_shifted = true,
                               .linear_attention = true,
                               .scale_roles = kScaleAttention | kScaleFfn | kScaleOutput |
                                              kScaleLinearAttention | kScaleNextn,
                               .mtp_prefix = "mtp."};
    return kArch;
}

const RefArch& ref_qwen35moe() {
    using namespace qwen35_ref;
    static constexpr std::string_view kModelTypes[] = {"qwen3_5_moe_text", "qwen3_5_moe"};
    static const RefArch kArch{.gguf_arch = "qwen35moe",
                               .model_types = kModelTypes,
                               .prepare_config = qwen35_defaults,
                               .finish_config = qwen35_config,
                               .shape = qwen35moe_shape,
                               .kvs = kQwen35Kvs,
                               .check_kvs = check_linear_attention_kvs,
                               .norm_plus_one = true,
                               .mlx_norms_shifted = true,
                               .linear_attention = true,
                               .scale_roles = kScaleAttention | kScaleExperts | kScaleOutput |
                                              kScaleLinearAttention | kScaleSharedExperts |
                                              kScaleNextn,
                               .mtp_prefix = "mtp.",
                               .fused_experts = true,
                               .intermediate_size_optional = true};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
