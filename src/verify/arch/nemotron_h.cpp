// verify's nemotron_h (NemotronHForCausalLM without num_experts_per_tok; converter class
// NemotronHModel -> GraniteHybridModel -> Mamba2Model, llama.cpp's src/models/nemotron-h.cpp),
// written from the converter and the loader: layer i is Mamba2, attention or MLP as
// hybrid_override_pattern[i] is 'M', '*' or '-'. Source names under "backbone." (embeddings,
// layers.N.norm, layers.N.mixer.*, norm_f) and lm_head. Shapes in HF order: in_proj
// [2 * d_inner + 2 * n_groups * state + heads, hidden] with d_inner = mamba_num_heads *
// mamba_head_dim, conv1d [d_inner + 2 * n_groups * state, 1, kernel] and its bias, dt_bias / A_log
// / D [heads], norm [d_inner], out_proj [hidden, d_inner]; attention q/k/v/o by head_dim; MLP
// up [intermediate, hidden] and down. Transforms: q/k permuted per head (undo_permute),
// ssm_a = -exp(A_log), A and D as [heads, 1], the norm as [n_groups, d_inner / n_groups], conv1d
// squeezed. KVs: context_length 2^20, per-layer feed_forward_length / head_count_kv arrays,
// rope.dimension_count = hidden_size // num_attention_heads, the ssm.* sizes,
// rope.scaling.finetuned false, key/value length = head_dim. nemotron_h_moe with moe_latent_size
// (Nemotron 3 Super's LatentMoE): an 'E' layer also has mixer.fc1_latent_proj [latent, hidden]
// and mixer.fc2_latent_proj [hidden, latent], its experts are [moe_ffn, latent] / [latent,
// moe_ffn], and moe_latent_size is written after expert_weights_scale. From MLX (mlx-lm's
// nemotron_h sanitize): conv1d [channels, kernel, 1], the experts stacked as
// mixer.switch_mlp.fc1 (up, [experts, moe_ffn, width]) and fc2 (down, [experts, width, moe_ffn]).
#include <string>

#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/metadata/kv_checker.hpp"

namespace rebox::verify_ref::detail {
namespace nemotron_h_ref {

constexpr RefKv kKvs[] = {RefKv::rms_epsilon, RefKv::vocab_size};

// The first of `keys` config.json has, a whole number in [1, 65536]; `fallback` when none
// (NemotronHConfig's default).
uint32_t nemotron_count(const nlohmann::json& root, std::initializer_list<const char*> keys,
                        uint32_t fallback) {
    for (const char* key : keys) {
        const auto it = root.find(key);
        if (it == root.end()) continue;
        if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > 65536)
            throw_input_error("config.json", key, "is " + it->dump(),
                              "a whole number from 1 to 65536");
        return static_cast<uint32_t>(it->get<int64_t>());
    }
    return fallback;
}

void nemotron_h_config(const nlohmann::json& root, RefConfig& c) {
    RefConfig::Mamba2 m;
    m.conv_kernel = nemotron_count(root, {"conv_kernel", "d_conv", "mamba_d_conv"}, 4);
    m.state_size = nemotron_count(root, {"state_size", "d_state", "ssm_state_size"}, 128);
    m.groups = nemotron_count(root, {"n_groups", "num_groups", "mamba_n_groups"}, 8);
    m.heads = nemotron_count(root, {"n_heads", "num_heads", "mamba_num_heads"}, 128);
    m.head_dim = nemotron_count(root, {"mamba_head_dim"}, 64);
    c.mamba2 = m;
    const auto pattern = root.find("hybrid_override_pattern");
    if (pattern == root.end() || !pattern->is_string())
        throw_input_error("config.json", "hybrid_override_pattern", "is missing",
                          "one of 'M', '*', '-' per layer");
    c.hybrid_pattern = pattern->get<std::string>();
    c.rope_theta_given = root.contains("rope_theta");
}

// The pattern's letter for layer N of "backbone.layers.N.REST"; 0 for other names.
char layer_kind(const RefConfig& c, std::string_view name, std::string_view* rest) {
    constexpr std::string_view kPrefix = "backbone.layers.";
    if (!name.starts_with(kPrefix)) return 0;
    name.remove_prefix(kPrefix.size());
    const size_t dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0) return 0;
    uint64_t layer = 0;
    for (size_t i = 0; i < dot; ++i) {
        if (name[i] < '0' || name[i] > '9' || layer > (uint64_t{1} << 32)) return 0;
        layer = layer * 10 + uint64_t(name[i] - '0');
    }
    *rest = name.substr(dot + 1);
    return layer < c.hybrid_pattern.size() ? c.hybrid_pattern[layer] : 0;
}

std::optional<std::vector<int64_t>> nemotron_h_shape(const RefConfig& c, std::string_view name) {
    using Shape = std::vector<int64_t>;
    const int64_t hidden = c.hidden_size;
    if (name == "backbone.embeddings.weight") return Shape{int64_t{c.vocab_size}, hidden};
    if (name == "backbone.norm_f.weight") return Shape{hidden};
    std::string_view rest;
    char kind = layer_kind(c, name, &rest);
    // NemotronHModel's MTP block (nemotron_h_moe with num_nextn_predict_layers): mtp.layers.0 is
    // an attention layer with the NextN input fusion, mtp.layers.1 a MoE layer with the head's
    // final norm, each with its own norm.
    if (kind == 0 && c.mtp_layers != 0 && !c.hybrid_pattern.empty()) {
        for (const auto& [prefix, sub_kind] : {std::pair{std::string_view("mtp.layers.0."), '*'},
                                               std::pair{std::string_view("mtp.layers.1."), 'E'}})
            if (name.starts_with(prefix)) {
                rest = name.substr(prefix.size());
                kind = sub_kind;
            }
        if (kind == '*' && (rest == "enorm.weight" || rest == "hnorm.weight")) return Shape{hidden};
        if (kind == '*' && rest == "eh_proj.weight") return Shape{hidden, 2 * hidden};
        if (kind == 'E' && rest == "final_layernorm.weight") return Shape{hidden};
    }
    if (kind == 0) return std::nullopt;
    const Shape wrong_kind{0};  // a tensor of another kind of layer: a shape no source has
    if (rest == "norm.weight") return Shape{hidden};
    const RefConfig::Mamba2 m = c.mamba2.value_or(RefConfig::Mamba2{});
    const int64_t inner = int64_t{m.heads} * m.head_dim;
    const int64_t channels = inner + 2 * int64_t{m.groups} * m.state_size;
    const int64_t q = int64_t{c.num_attention_heads} * c.head_dim;
    const int64_t kv = int64_t{c.num_key_value_heads} * c.head_dim;
    if (rest == "mixer.in_proj.weight")
        return kind == 'M' ? Shape{inner + channels + m.heads, hidden} : wrong_kind;
    if (rest == "mixer.conv1d.weight")
        return kind == 'M' ? Shape{channels, 1, int64_t{m.conv_kernel}} : wrong_kind;
    if (rest == "mixer.conv1d.bias") return kind == 'M' ? Shape{channels} : wrong_kind;
    if (rest == "mixer.dt_bias" || rest == "mixer.A_log" || rest == "mixer.D")
        return kind == 'M' ? Shape{int64_t{m.heads}} : wrong_kind;
    if (rest == "mixer.norm.weight") return kind == 'M' ? Shape{inner} : wrong_kind;
    if (rest == "mixer.out_proj.weight") return kind == 'M' ? Shape{hidden, inner} : wrong_kind;
    if (rest == "mixer.q_proj.weight") return kind == '*' ? Shape{q, hidden} : wrong_kind;
    if (rest == "mixer.k_proj.weight" || rest == "mixer.v_proj.weight")
        return kind == '*' ? Shape{kv, hidden} : wrong_kind;
    if (rest == "mixer.o_proj.weight") return kind == '*' ? Shape{hidden, q} : wrong_kind;
    const int64_t moe_ffn = c.moe_intermediate_size.value_or(0);
    const int64_t shared = c.shared_expert_intermediate_size.value_or(0);
    const int64_t experts = c.num_experts;
    // LatentMoE: fc1_latent_proj [latent, hidden] and fc2_latent_proj [hidden, latent] around
    // experts that work at the latent width.
    const int64_t latent = c.moe_latent_size.value_or(0);
    const int64_t width = c.moe_latent_size ? latent : hidden;
    if (rest == "mixer.fc1_latent_proj.weight")
        return kind == 'E' && latent != 0 ? Shape{latent, hidden} : wrong_kind;
    if (rest == "mixer.fc2_latent_proj.weight")
        return kind == 'E' && latent != 0 ? Shape{hidden, latent} : wrong_kind;
    if (rest == "mixer.gate.weight") return kind == 'E' ? Shape{experts, hidden} : wrong_kind;
    if (rest == "mixer.gate.e_score_correction_bias")
        return kind == 'E' ? Shape{experts} : wrong_kind;
    if (rest == "mixer.shared_experts.up_proj.weight")
        return kind == 'E' ? Shape{shared, hidden} : wrong_kind;
    if (rest == "mixer.shared_experts.down_proj.weight")
        return kind == 'E' ? Shape{hidden, shared} : wrong_kind;
    if (rest.starts_with("mixer.experts.") && kind == 'E') {
        std::string_view tail = rest.substr(14);
        const size_t dot = tail.find('.');
        if (dot == std::string_view::npos) return wrong_kind;
        // "{e}": the experts as verify stacks them, [experts, rows, cols].
        const bool stacked = tail.substr(0, dot) == "{e}";
        tail.remove_prefix(dot + 1);
        if (tail == "up_proj.weight")
            return stacked ? Shape{experts, moe_ffn, width} : Shape{moe_ffn, width};
        if (tail == "down_proj.weight")
            return stacked ? Shape{experts, width, moe_ffn} : Shape{width, moe_ffn};
    }
    // mlx-lm's sanitize: the experts' up_proj stacked as switch_mlp.fc1, down_proj as fc2.
    if (rest == "mixer.switch_mlp.fc1.weight")
        return kind == 'E' ? Shape{experts, moe_ffn, width} : wrong_kind;
    if (rest == "mixer.switch_mlp.fc2.weight")
        return kind == 'E' ? Shape{experts, width, moe_ffn} : wrong_kind;
    if (rest == "mixer.up_proj.weight")
        return kind == '-' ? Shape{int64_t{c.intermediate_size}, hidden} : wrong_kind;
    if (rest == "mixer.down_proj.weight")
        return kind == '-' ? Shape{hidden, int64_t{c.intermediate_size}} : wrong_kind;
    return wrong_kind;
}

// The GGUF shape (HF order) of the reshaped Mamba2 tensors: A and D [heads, 1], the norm
// [n_groups, d_inner / n_groups].
std::optional<std::vector<int64_t>> nemotron_h_reshaped(const RefConfig& c,
                                                        std::string_view gguf_tensor) {
    const RefConfig::Mamba2 m = c.mamba2.value_or(RefConfig::Mamba2{});
    if (gguf_tensor.ends_with(".ssm_norm.weight") && m.groups != 0)
        return std::vector<int64_t>{m.groups, int64_t{m.heads} * m.head_dim / m.groups};
    return std::vector<int64_t>{m.heads, 1};
}

// What NemotronHModel, GraniteHybridModel and LlamaModel write beyond the common keys.
void check_nemotron_h_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    kv.expect_u32(arch + ".context_length", 1u << 20);
    std::vector<int64_t> ffn, kv_heads;
    for (const char kind : config.hybrid_pattern) {
        ffn.push_back(kind == '-'   ? config.intermediate_size
                      : kind == 'E' ? config.moe_intermediate_size.value_or(0)
                                    : 0);
        kv_heads.push_back(kind == '*' ? config.num_key_value_heads : 0);
    }
    // The folded MTP block, registered as an attention and a MoE layer both.
    for (uint32_t i = 0; i < config.mtp_layers; ++i) {
        ffn.push_back(config.moe_intermediate_size.value_or(0));
        kv_heads.push_back(config.num_key_value_heads);
    }
    check_numbers(kv, arch + ".feed_forward_length", GgufType::INT32, ffn);
    check_numbers(kv, arch + ".attention.head_count_kv", GgufType::INT32, kv_heads);
    if (config.rope_theta_given)
        kv.expect_f32(arch + ".rope.freq_base", config.rope_theta);
    else
        kv.expect_absent(arch + ".rope.freq_base", "config.json has no rope_theta");
    if (config.layer_norm_eps)
        kv.expect_f32(arch + ".attention.layer_norm_epsilon", *config.layer_norm_eps);
    kv.expect_u32(
        arch + ".rope.dimension_count",
        config.num_attention_heads == 0 ? 0 : config.hidden_size / config.num_attention_heads);
    const RefConfig::Mamba2 m = config.mamba2.value_or(RefConfig::Mamba2{});
    kv.expect_u32(arch + ".ssm.conv_kernel", m.conv_kernel);
    kv.expect_u32(arch + ".ssm.state_size", m.state_size);
    kv.expect_u32(arch + ".ssm.group_count", m.groups);
    kv.expect_u32(arch + ".ssm.inner_size", uint64_t{m.heads} * m.head_dim);
    kv.expect_u32(arch + ".ssm.time_step_rank", m.heads);
    kv.expect_bool(arch + ".rope.scaling.finetuned", false);
    kv.expect_u32(arch + ".attention.key_length", config.head_dim);
    kv.expect_u32(arch + ".attention.value_length", config.head_dim);
}

// nemotron_h_moe: TextModel's expert groups, then NemotronHModel's shared count and routing.
void check_nemotron_h_moe_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    check_nemotron_h_kvs(kv, arch, config);
    const std::string none = "not in config.json";
    kv.expect_optional(arch + ".expert_group_count", config.n_group, none);
    kv.expect_optional(arch + ".expert_group_used_count", config.topk_group, none);
    kv.expect_optional(arch + ".expert_shared_count", config.shared_experts, none);
    kv.expect_optional(arch + ".expert_weights_norm", config.norm_topk_prob, none);
    if (config.routed_scaling_factor)
        kv.expect_f32(arch + ".expert_weights_scale", *config.routed_scaling_factor);
    else
        kv.expect_absent(arch + ".expert_weights_scale", none);
    kv.expect_optional(arch + ".moe_latent_size", config.moe_latent_size, none);
    if (config.mtp_layers != 0)
        kv.expect_u32(arch + ".nextn_predict_layers", config.mtp_layers);
    else
        kv.expect_absent(arch + ".nextn_predict_layers", "no MTP block kept");
}

// NemotronHModel is nemotron_h_moe when config.json has num_experts_per_tok.
bool selects_moe(const nlohmann::json& root, std::string_view model_type) {
    return model_type == "nemotron_h" && root.contains("num_experts_per_tok");
}

// TextModel's RMS epsilon: rms_norm_eps, else norm_eps (Nemotron 3 Nano's spelling).
void rms_eps_name(nlohmann::json& root) {
    if (!root.contains("rms_norm_eps") && root.contains("norm_eps"))
        root["rms_norm_eps"] = root["norm_eps"];
}

// n_routed_experts as num_experts, moe_shared_expert_intermediate_size as the shared width.
void moe_names(nlohmann::json& root) {
    rms_eps_name(root);
    rename_ref_routed_experts(root);
    if (const auto shared = root.find("moe_shared_expert_intermediate_size"); shared != root.end())
        root["shared_expert_intermediate_size"] = *shared;
}

void nemotron_h_moe_config(const nlohmann::json& root, RefConfig& c) {
    nemotron_h_config(root, c);
    read_ref_moe_routing(root, c);
    // NemotronHModel writes moe_latent_size when config.json has one (not null).
    c.moe_latent_size = ref_count(root, "moe_latent_size", 65536, 1);
    // ... and folds its one MTP block (num_nextn_predict_layers 1, which it asserts) after the
    // last layer.
    c.mtp_layers = ref_count(root, "num_nextn_predict_layers", 1).value_or(0);
}

}  // namespace nemotron_h_ref

const RefArch& ref_nemotron_h() {
    using namespace nemotron_h_ref;
    static constexpr std::string_view kModelTypes[] = {"nemotron_h"};
    static const RefArch kArch{
        .gguf_arch = "nemotron_h",
        .model_types = kModelTypes,
        .prepare_config = rms_eps_name,
        .finish_config = nemotron_h_config,
        .shape = nemotron_h_shape,
        .kvs = kKvs,
        .check_kvs = check_nemotron_h_kvs,
        .own_head_count_kv = true,
        .rope_permute_qk = true,
        .scale_roles = kScaleAttention | kScaleFfn | kScaleOutput | kScaleSsm,
        .own_context_and_ffn = true,
        .nemotron_vocab = true,
        .nemotron_add_bos = true,
        .mamba2 = true,
        .mamba2_shape = nemotron_h_reshaped};
    return kArch;
}

const RefArch& ref_nemotron_h_moe() {
    using namespace nemotron_h_ref;
    static const RefArch kArch{.gguf_arch = "nemotron_h_moe",
                               .selects = selects_moe,
                               .prepare_config = moe_names,
                               .finish_config = nemotron_h_moe_config,
                               .shape = nemotron_h_shape,
                               .kvs = kKvs,
                               .check_kvs = check_nemotron_h_moe_kvs,
                               .own_head_count_kv = true,
                               .rope_permute_qk = true,
                               .scale_roles = kScaleAttention | kScaleExperts | kScaleOutput |
                                              kScaleSsm | kScaleSharedExperts | kScaleNextn,
                               .mtp_prefix = "mtp.",
                               .own_context_and_ffn = true,
                               .nemotron_vocab = true,
                               .mamba2 = true,
                               .mamba2_shape = nemotron_h_reshaped,
                               .mtp_fold = true};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
