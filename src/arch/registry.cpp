// The registry's lookups and the table walks every architecture shares: name mapping both ways,
// ne from config.json, required tensors, output order, rope_scaling policy.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "arch_tables.hpp"

namespace rebox::arch {
namespace {

constexpr std::string_view kModelPrefix = "model.";
constexpr std::string_view kLanguageModel = "language_model.";
constexpr std::string_view kHfLayerPrefix = "layers.";  // the decoders' (stacked_name)
constexpr std::string_view kGgufLayerPrefix = "blk.";

const Architecture* const kArchitectures[] = {
    &detail::qwen3_architecture(),
    &detail::qwen2_architecture(),
    &detail::llama_architecture(),
    &detail::qwen3_moe_architecture(),
    &detail::qwen2_moe_architecture(),
    &detail::mixtral_architecture(),  // after llama: the GGUF name "llama" finds llama's table
    &detail::phi3_architecture(),
    &detail::gemma_architecture(),
    &detail::gemma2_architecture(),
    &detail::gemma3_architecture(),
    &detail::gemma_embedding_architecture(),
    &detail::bert_architecture(),
    &detail::xlm_roberta_architecture(),
    &detail::nomic_bert_architecture(),
    &detail::gpt_oss_architecture(),
    &detail::modernbert_architecture(),
    &detail::seed_oss_architecture(),
    &detail::olmo2_architecture(),
    &detail::smollm3_architecture(),
    &detail::mistral3_architecture(),
    &detail::apertus_architecture(),
    &detail::qwen35_architecture(),
    &detail::qwen35moe_architecture(),
    &detail::qwen3next_architecture(),
    &detail::glm4moe_architecture(),
    &detail::gemma4_architecture(),
    &detail::deepseek2_architecture(),
    &detail::glm4_moe_lite_architecture(),
    &detail::qwen2vl_architecture(),
    &detail::qwen3vl_architecture(),
    &detail::qwen3vlmoe_architecture(),
    &detail::nemotron_h_architecture(),
    &detail::nemotron_h_moe_architecture(),
};

constexpr std::string_view kExpertPlaceholder = "{e}";

// Matches `text` against a pattern holding "{e}" once; sets the expert index (a plain decimal).
bool match_expert_pattern(std::string_view pattern, std::string_view text, uint32_t* expert) {
    const size_t at = pattern.find(kExpertPlaceholder);
    if (at == std::string_view::npos) return false;
    const std::string_view head = pattern.substr(0, at);
    const std::string_view tail = pattern.substr(at + kExpertPlaceholder.size());
    if (text.size() <= head.size() + tail.size() || !text.starts_with(head) ||
        !text.ends_with(tail))
        return false;
    const std::string_view digits =
        text.substr(head.size(), text.size() - head.size() - tail.size());
    if (digits.size() > 1 && digits[0] == '0') return false;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *expert);
    return ec == std::errc() && end == digits.data() + digits.size();
}

// Splits "X.weight" / "X.bias" into X and whether it is the bias.
bool split_suffix(std::string_view name, std::string_view* stem, bool* is_bias) {
    for (const std::string_view suffix : {std::string_view(".weight"), std::string_view(".bias")}) {
        if (name.size() > suffix.size() && name.ends_with(suffix)) {
            *stem = name.substr(0, name.size() - suffix.size());
            *is_bias = suffix == ".bias";
            return true;
        }
    }
    return false;
}

// "{i}.REST" with {i} a plain decimal (no sign, no leading zeros) fitting uint32.
bool split_layer_index(std::string_view text, uint32_t* layer, std::string_view* rest) {
    const size_t dot = text.find('.');
    if (dot == std::string_view::npos || dot == 0) return false;
    if (dot > 1 && text[0] == '0') return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + dot, *layer);
    if (ec != std::errc() || end != text.data() + dot) return false;
    *rest = text.substr(dot + 1);
    return !rest->empty();
}

bool loads(const TensorSpec& spec, bool is_bias) {
    // (a required_with_moe_latent row loads whatever config.json says: the shape check refuses
    // a latent projection a config without moe_latent_size has no width for)
    return (is_bias ? spec.bias : spec.weight) != Presence::absent;
}

std::optional<TensorRef> make_ref(const Architecture& arch, const TensorSpec& spec,
                                  std::optional<uint32_t> layer, bool is_bias) {
    TensorRef ref;
    ref.spec = &spec;
    ref.layer = layer;
    ref.is_bias = is_bias;
    const std::string suffix = spec.bare ? "" : is_bias ? ".bias" : ".weight";
    const std::string hf_suffix = spec.hf_bare ? "" : suffix;
    if (layer) {
        const std::string index = std::to_string(*layer) + ".";
        ref.gguf_name = std::string(kGgufLayerPrefix) + index + std::string(spec.gguf) + suffix;
        ref.hf_name = std::string(arch.hf_layer_prefix) + index + std::string(spec.hf) + hf_suffix;
    } else {
        ref.gguf_name = std::string(spec.gguf) + suffix;
        ref.hf_name = std::string(spec.hf) + hf_suffix;
    }
    return ref;
}

// The table entry of `stem` (the name without ".weight" / ".bias", or the whole name for the
// bare specs, and on the HF side for the hf_bare ones).
std::optional<TensorRef> resolve_stem(const Architecture& arch, std::string_view stem, bool is_bias,
                                      bool from_hf, bool bare) {
    const auto side = [from_hf](const TensorSpec& spec) { return from_hf ? spec.hf : spec.gguf; };
    const auto other_bareness = [from_hf, bare](const TensorSpec& spec) {
        return (spec.bare || (from_hf && spec.hf_bare)) != bare;
    };
    const std::string_view layer_prefix = from_hf ? arch.hf_layer_prefix : kGgufLayerPrefix;
    if (stem.starts_with(layer_prefix)) {
        uint32_t layer = 0;
        std::string_view rest;
        if (!split_layer_index(stem.substr(layer_prefix.size()), &layer, &rest))
            return std::nullopt;
        for (const TensorSpec& spec : arch.layer) {
            if (other_bareness(spec) || !loads(spec, is_bias)) continue;
            // A per-expert stem is a pattern ("{e}"): from the HF side only its instances match.
            const bool pattern = from_hf && spec.role == SourceRole::experts;
            if (side(spec) == rest && !pattern) return make_ref(arch, spec, layer, is_bias);
            if (!pattern) continue;
            uint32_t expert = 0;
            if (match_expert_pattern(spec.hf, rest, &expert)) {
                auto ref = make_ref(arch, spec, layer, is_bias);
                ref->expert = expert;
                ref->hf_name = expert_name(ref->hf_name, expert);
                return ref;
            }
            if (!spec.stacked_hf.empty() && spec.stacked_hf == rest) {
                auto ref = make_ref(arch, spec, layer, is_bias);
                ref->stacked_source = true;
                ref->hf_name = stacked_name(spec, layer);
                return ref;
            }
        }
        return std::nullopt;
    }
    for (const auto table : {arch.model_first, arch.model_last})
        for (const TensorSpec& spec : table)
            if (!other_bareness(spec) && side(spec) == stem && loads(spec, is_bias))
                return make_ref(arch, spec, std::nullopt, is_bias);
    return std::nullopt;
}

std::optional<TensorRef> resolve(const Architecture& arch, std::string_view name, bool from_hf) {
    std::string_view stem;
    bool is_bias = false;
    if (split_suffix(name, &stem, &is_bias))
        if (auto ref = resolve_stem(arch, stem, is_bias, from_hf, /*bare=*/false)) return ref;
    return resolve_stem(arch, name, /*is_bias=*/false, from_hf, /*bare=*/true);
}

// _QwenMtpMixin.filter_tensors: "mtp.layers.K.REST" is "layers.{main_layers + K}.REST", and
// "mtp.X.SUFFIX" with X one of mtp_renames is "layers.{main_layers}.{stem}.SUFFIX". Other names
// (and every name when the architecture has no MTP layers) stay. With mtp_fold (NemotronHModel's
// _MTP_SPECIAL_RENAMES, then its fold) the renames first, and every K is layer main_layers.
std::string mtp_to_layer(const Architecture& arch, std::string_view name, uint32_t main_layers) {
    const std::string_view prefix = arch.mtp_layer_prefix;
    if (prefix.empty() || main_layers == 0) return std::string(name);
    const auto renamed = [&]() -> std::optional<std::string> {
        for (const auto& [hf, stem] : arch.mtp_renames) {
            if (!name.starts_with(hf) || name.size() <= hf.size() || name[hf.size()] != '.')
                continue;
            const std::string_view suffix = name.substr(hf.size() + 1);
            if (suffix.find('.') != std::string_view::npos) continue;  // "mtp.X.SUFFIX" only
            return std::string(kHfLayerPrefix) + std::to_string(main_layers) + "." +
                   std::string(stem) + "." + std::string(suffix);
        }
        return std::nullopt;
    };
    if (arch.mtp_fold)
        if (auto name_in_layer = renamed()) return *name_in_layer;
    uint32_t index = 0;
    std::string_view rest;
    if (name.starts_with(prefix) && split_layer_index(name.substr(prefix.size()), &index, &rest))
        return std::string(kHfLayerPrefix) +
               std::to_string(uint64_t{main_layers} + (arch.mtp_fold ? 0 : index)) + "." +
               std::string(rest);
    if (auto name_in_layer = renamed()) return *name_in_layer;
    return std::string(name);
}

// The checkpoint's own spelling of an MTP layer's tensor (the inverse of mtp_to_layer): `ref` of a
// layer at or past main_layers gets "mtp.layers.K.REST" or its mtp_renames name.
void layer_to_mtp(const Architecture& arch, uint32_t main_layers, TensorRef& ref) {
    if (arch.mtp_layer_prefix.empty() || main_layers == 0 || !ref.layer || *ref.layer < main_layers)
        return;
    const std::string suffix = ref.spec->bare ? "" : ref.is_bias ? ".bias" : ".weight";
    for (const auto& [hf, stem] : arch.mtp_renames)
        if (stem == ref.spec->hf) {
            ref.hf_name = *ref.layer == main_layers ? std::string(hf) + suffix : std::string();
            return;
        }
    const uint32_t index = !arch.mtp_fold ? *ref.layer - main_layers
                           : (ref.spec->kinds & arch.mtp_fold_second_kinds) ? 1
                                                                            : 0;
    ref.hf_name = std::string(arch.mtp_layer_prefix) + std::to_string(index) + "." +
                  std::string(ref.spec->hf) + suffix;
}

// The kind of `layer` (ModelConfig::layer_kinds; 0 without them), 255 past the last layer of a
// model that has them.
uint8_t layer_kind(const ModelConfig& config, uint64_t layer) {
    if (config.layer_kinds.empty()) return 0;
    return layer < config.layer_kinds.size() ? config.layer_kinds[layer] : 255;
}

bool holds(const TensorSpec& spec, uint8_t kind) {
    return spec.kinds == 0 || (kind < 8 && ((spec.kinds >> kind) & 1u) != 0);
}

int64_t resolve_dim(Dim dim, const ModelConfig& c) {
    switch (dim) {
        case Dim::hidden:
            return c.hidden_size;
        case Dim::vocab:
            return c.vocab_size;
        case Dim::ffn:
            return c.intermediate_size;
        case Dim::q_width:
            return int64_t{c.num_attention_heads} * c.head_dim;
        case Dim::kv_width:
            return int64_t{c.num_key_value_heads} * c.head_dim;
        case Dim::head_dim:
            return c.head_dim;
        case Dim::experts:
            return c.num_experts;
        case Dim::expert_ffn:
            return c.moe_intermediate_size.value_or(c.intermediate_size);
        case Dim::shared_ffn:
            return c.shared_expert_intermediate_size.value_or(0);
        case Dim::one:
            return 1;
        case Dim::qkv_width:
            return int64_t{c.num_attention_heads} * c.head_dim +
                   2 * int64_t{c.num_key_value_heads} * c.head_dim;
        case Dim::ffn_x2:
            return 2 * int64_t{c.intermediate_size};
        case Dim::positions:
            return int64_t{c.max_position_embeddings} - c.position_offset;
        case Dim::token_types:
            return c.type_vocab_size;
        case Dim::labels:
            return c.num_labels;
        case Dim::heads:
            return c.num_attention_heads;
        case Dim::dense_2_out:
            return c.dense_2 ? c.dense_2->out : 0;
        case Dim::dense_3_in:
            return c.dense_3 ? c.dense_3->in : 0;
        case Dim::q_width_x2:
            return 2 * int64_t{c.num_attention_heads} * c.head_dim;
        case Dim::hidden_x2:
            return 2 * int64_t{c.hidden_size};
        case Dim::lin_qkv_width:
        case Dim::lin_v_width:
        case Dim::lin_v_heads:
        case Dim::lin_v_head_dim:
        case Dim::lin_v_heads_x2:
        case Dim::lin_conv_width: {
            const ModelConfig::LinearAttention l =
                c.linear_attention.value_or(ModelConfig::LinearAttention{});
            const int64_t v_width = int64_t{l.value_heads} * l.value_head_dim;
            if (dim == Dim::lin_qkv_width)
                return 2 * int64_t{l.key_heads} * l.key_head_dim + v_width;
            if (dim == Dim::lin_v_width) return v_width;
            if (dim == Dim::lin_v_heads) return l.value_heads;
            if (dim == Dim::lin_v_heads_x2) return 2 * int64_t{l.value_heads};
            if (dim == Dim::lin_v_head_dim) return l.value_head_dim;
            return l.conv_kernel;
        }
        case Dim::shared_experts_ffn:
            return int64_t{c.moe_intermediate_size.value_or(0)} * c.n_shared_experts.value_or(0);
        case Dim::expert_ffn_x2:
            return 2 * int64_t{c.moe_intermediate_size.value_or(0)};
        case Dim::head_dim_full:
        case Dim::q_width_full:
        case Dim::kv_width_full: {
            const ModelConfig::FullAttention f =
                c.full_attention.value_or(ModelConfig::FullAttention{});
            if (dim == Dim::head_dim_full) return f.head_dim;
            if (dim == Dim::q_width_full) return int64_t{c.num_attention_heads} * f.head_dim;
            return int64_t{f.kv_heads.value_or(c.num_key_value_heads)} * f.head_dim;
        }
        case Dim::q_lora:
        case Dim::kv_lora:
        case Dim::kv_a_width:
        case Dim::q_mla_width:
        case Dim::o_mla_width:
        case Dim::mla_nope:
        case Dim::mla_v: {
            const ModelConfig::Mla m = c.mla.value_or(ModelConfig::Mla{});
            if (dim == Dim::q_lora) return m.q_lora_rank.value_or(0);
            if (dim == Dim::kv_lora) return m.kv_lora_rank;
            if (dim == Dim::kv_a_width) return int64_t{m.kv_lora_rank} + m.rope_head_dim;
            if (dim == Dim::q_mla_width)
                return int64_t{c.num_attention_heads} *
                       (int64_t{m.nope_head_dim} + m.rope_head_dim);
            if (dim == Dim::o_mla_width) return int64_t{c.num_attention_heads} * m.v_head_dim;
            if (dim == Dim::mla_nope) return m.nope_head_dim;
            return m.v_head_dim;
        }
        case Dim::ssm_inner:
        case Dim::ssm_conv_channels:
        case Dim::ssm_in_width:
        case Dim::ssm_heads:
        case Dim::ssm_groups:
        case Dim::ssm_group_width:
        case Dim::ssm_conv_kernel: {
            const ModelConfig::Mamba2 m = c.mamba2.value_or(ModelConfig::Mamba2{});
            const int64_t inner = int64_t{m.heads} * m.head_dim;
            const int64_t channels = inner + 2 * int64_t{m.groups} * m.state_size;
            if (dim == Dim::ssm_inner) return inner;
            if (dim == Dim::ssm_conv_channels) return channels;
            if (dim == Dim::ssm_in_width) return inner + channels + m.heads;
            if (dim == Dim::ssm_heads) return m.heads;
            if (dim == Dim::ssm_groups) return m.groups;
            if (dim == Dim::ssm_group_width) return m.groups == 0 ? 0 : inner / m.groups;
            return m.conv_kernel;
        }
        case Dim::moe_latent:
            return c.moe_latent_size.value_or(0);
        case Dim::expert_width:
            return c.moe_latent_size.value_or(c.hidden_size);
        case Dim::per_layer_input:
            return c.per_layer_input_width;
        case Dim::per_layer_input_all:
            return int64_t{c.per_layer_input_width} * c.num_hidden_layers;
    }
    return 0;
}

// The row of the table that holds `ref`'s tensor in a layer of `kind`: the resolved one, or
// another row of the same GGUF name for that kind (gemma4's full-attention q/k/v/o and head
// norms, with their own widths); null when no row does.
const TensorSpec* spec_for_kind(const Architecture& arch, const TensorRef& ref, uint8_t kind) {
    if (holds(*ref.spec, kind)) return ref.spec;
    for (const TensorSpec& spec : arch.layer)
        if (spec.gguf == ref.spec->gguf && spec.bare == ref.spec->bare && holds(spec, kind) &&
            loads(spec, ref.is_bias))
            return &spec;
    return nullptr;
}

// The name after "model." / "language_model." and the architecture's head prefix ("bert.").
std::string strip_arch_prefixes(const Architecture& arch, std::string_view hf_name) {
    std::string name = strip_model_prefix(hf_name);
    for (const std::string_view prefix : arch.hf_head_prefixes)
        if (name.starts_with(prefix)) return name.substr(prefix.size());
    return name;
}

std::string lowercase(std::string_view text) {
    std::string lower;
    for (const char c : text) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return lower;
}

bool has_extra(const Architecture& arch, ExtraTensor wanted) {
    for (const ExtraTensor extra : arch.extras)
        if (extra == wanted) return true;
    return false;
}

bool has_kv(const Architecture& arch, ArchKv wanted) {
    for (const ArchKv kv : arch.kvs)
        if (kv == wanted) return true;
    return false;
}

// Phi3MiniModel.generate_extra_tensors for "longrope" / "su": the attention factor KV and the
// checks that precede the two factor tensors; a blocker where the converter raises.
void plan_long_rope(const ModelConfig& config, const RopeScalingConfig& scaling,
                    RopeScalingPlan* plan) {
    const auto refuse = [plan](std::string field, std::string reason) {
        plan->blocker_field = std::move(field);
        plan->blocker = std::move(reason);
    };
    if (!scaling.long_factor || scaling.long_factor->empty())
        return refuse("config.json: rope_scaling.long_factor",
                      "rope_scaling type '" + scaling.type +
                          "' without long_factor: no rope_factors_long.weight to write");
    if (!scaling.short_factor)
        return refuse("config.json: rope_scaling.short_factor",
                      "rope_scaling type '" + scaling.type +
                          "' without short_factor: no rope_factors_short.weight to write");
    const auto original = original_context_length(config);
    if (!original) return;  // refused with the KV (plan_rope_scaling)
    const uint32_t rotary = rotary_dimension_count(config);
    double fraction = 1.0;
    if (scaling.partial_rotary_factor)
        fraction = *scaling.partial_rotary_factor;
    else if (config.partial_rotary_factor)
        fraction = *config.partial_rotary_factor;
    char fraction_text[32];
    std::snprintf(fraction_text, sizeof fraction_text, "%g", fraction);
    const std::string need = std::to_string(rotary / 2) + " (rotary dimensions " +
                             std::to_string(rotary) + " = int(partial_rotary_factor " +
                             fraction_text + " * hidden_size " +
                             std::to_string(config.hidden_size) + ") // num_attention_heads " +
                             std::to_string(config.num_attention_heads) + ", halved" +
                             (rotary % 2 != 0 ? "; odd, so no list fits)" : ")");
    for (const bool is_long : {true, false}) {
        const size_t count = (is_long ? *scaling.long_factor : *scaling.short_factor).size();
        const char* field = is_long ? "long_factor" : "short_factor";
        const char* tensor = is_long ? "rope_factors_long.weight" : "rope_factors_short.weight";
        if (rotary % 2 != 0 || count != rotary / 2) {
            plan->blocker_fix = "give rope_scaling." + std::string(field) + " " +
                                std::to_string(rotary / 2) +
                                " numbers, one per rotary pair (the config.json of these weights)";
            return refuse(std::string("config.json: rope_scaling.") + field,
                          std::string(tensor) + " would get " + std::to_string(count) +
                              " values from rope_scaling." + field + " but needs " + need);
        }
    }
    // scale = max_pos / orig in Python floats; math.sqrt / math.log are the C library's.
    const double scale = double(config.max_position_embeddings) / double(*original);
    const double factor =
        scale > 1.0 ? std::sqrt(1.0 + std::log(scale) / std::log(double(*original))) : 1.0;
    plan->attn_factor = static_cast<float>(factor);
    plan->rope_factors = true;
}

}  // namespace

std::span<const Architecture* const> all_architectures() { return kArchitectures; }

const Architecture* find_architecture(std::string_view model_type) {
    for (const Architecture* arch : kArchitectures) {
        if (arch->gguf_arch == model_type) return arch;
        for (const std::string_view accepted : arch->model_types)
            if (accepted == model_type) return arch;
    }
    return nullptr;
}

const Architecture* claiming_architecture(const nlohmann::json& root) {
    for (const Architecture* arch : kArchitectures)
        if (arch->claims_config && arch->claims_config(root)) return arch;
    return nullptr;
}

bool graph_applies_nvfp4_scale(const Architecture& arch, std::string_view role) {
    static constexpr std::string_view kAttention[] = {"attn_q", "attn_k", "attn_v", "attn_qkv",
                                                      "attn_output"};
    static constexpr std::string_view kDenseFfn[] = {"ffn_gate", "ffn_up", "ffn_down"};
    static constexpr std::string_view kExperts[] = {"ffn_gate_exps", "ffn_up_exps",
                                                    "ffn_down_exps"};
    static constexpr std::string_view kSsm[] = {"ssm_in", "ssm_out"};
    static constexpr std::string_view kSharedExperts[] = {"ffn_gate_shexp", "ffn_up_shexp",
                                                          "ffn_down_shexp"};
    const auto in = [role](std::span<const std::string_view> roles) {
        return std::find(roles.begin(), roles.end(), role) != roles.end();
    };
    const GraphScales& scales = arch.nvfp4_scales;
    // Every registry graph uses build_qkv and wo_s, but deepseek2's MLA multiplies its q by hand.
    if (in(kAttention)) return !scales.attention_output_only || role == "attn_output";
    static constexpr std::string_view kLinearAttention[] = {"attn_gate", "ssm_beta", "ssm_alpha",
                                                            "ssm_out"};
    return (scales.output && role == "output") || (scales.dense_ffn && in(kDenseFfn)) ||
           (scales.experts && in(kExperts)) || (scales.linear_attention && in(kLinearAttention)) ||
           (scales.ssm && in(kSsm)) || (scales.shared_experts && in(kSharedExperts)) ||
           (scales.nextn && role == "nextn.eh_proj");
}

std::string supported_model_types() {
    std::string list;
    for (const Architecture* arch : kArchitectures)
        for (const std::string_view accepted : arch->model_types)
            list += (list.empty() ? "" : ", ") + std::string(accepted);
    return list;
}

std::string strip_model_prefix(std::string_view hf_name) {
    std::string name(hf_name);
    for (size_t at = 0; (at = name.find(kLanguageModel, at)) != std::string::npos;) {
        if (at == 0 || name[at - 1] == '.')
            name.erase(at, kLanguageModel.size());
        else
            at += kLanguageModel.size();
    }
    if (name.starts_with(kModelPrefix)) name.erase(0, kModelPrefix.size());
    return name;
}

bool is_left_out(const Architecture& arch, std::string_view hf_name) {
    const std::string stripped = strip_arch_prefixes(arch, hf_name);
    for (const std::string_view prefix : arch.left_out_prefixes)
        if (stripped.starts_with(prefix)) return true;
    return false;
}

bool is_converter_buffer(const Architecture& arch, std::string_view hf_name) {
    // conversion/base.py, ModelBase.prepare_tensors: "we don't need these".
    for (const std::string_view suffix :
         {".attention.masked_bias", ".attention.bias", ".rotary_emb.inv_freq"})
        if (hf_name.ends_with(suffix)) return true;
    const std::string stripped = strip_arch_prefixes(arch, hf_name);
    for (const std::string_view name : arch.converter_buffers)
        if (stripped == name) return true;
    return false;
}

std::optional<TensorRef> resolve_hf(const Architecture& arch, std::string_view hf_name,
                                    uint32_t main_layers) {
    const std::string stripped = strip_arch_prefixes(arch, hf_name);
    const std::string name = mtp_to_layer(arch, stripped, main_layers);
    auto ref = resolve(arch, name, /*from_hf=*/true);
    if (ref && name != stripped) ref->hf_name = stripped;
    return ref;
}

namespace {

// An HF name of one of the architecture's layers ("PREFIX N.REST" once the wrapper prefixes are
// stripped into *name): N and REST (a view into *name); false for other names.
bool split_hf_layer_name(const Architecture& arch, std::string_view hf_name, std::string* name,
                         uint32_t* layer, std::string_view* rest) {
    *name = strip_arch_prefixes(arch, hf_name);
    const std::string_view view(*name);
    return view.starts_with(arch.hf_layer_prefix) &&
           split_layer_index(view.substr(arch.hf_layer_prefix.size()), layer, rest);
}

}  // namespace

std::optional<uint32_t> hf_layer_index(const Architecture& arch, std::string_view hf_name) {
    std::string name;
    uint32_t layer = 0;
    std::string_view rest;
    if (!split_hf_layer_name(arch, hf_name, &name, &layer, &rest)) return std::nullopt;
    return layer;
}

std::optional<std::pair<size_t, uint32_t>> match_layer_scalar(const Architecture& arch,
                                                              std::string_view hf_name) {
    if (arch.layer_scalar_kvs.empty()) return std::nullopt;
    std::string name;
    uint32_t layer = 0;
    std::string_view rest;
    if (!split_hf_layer_name(arch, hf_name, &name, &layer, &rest)) return std::nullopt;
    for (size_t i = 0; i < arch.layer_scalar_kvs.size(); ++i)
        if (arch.layer_scalar_kvs[i].hf == rest) return std::pair{i, layer};
    return std::nullopt;
}

std::optional<TensorRef> resolve_gguf(const Architecture& arch, std::string_view gguf_name,
                                      uint32_t main_layers) {
    auto ref = resolve(arch, gguf_name, /*from_hf=*/false);
    if (ref) layer_to_mtp(arch, main_layers, *ref);
    return ref;
}

std::optional<std::vector<int64_t>> expected_ne(const Architecture& arch, const ModelConfig& config,
                                                std::string_view gguf_name) {
    const auto ref = resolve_gguf(arch, gguf_name);
    if (!ref) return std::nullopt;
    const TensorSpec* row =
        ref->layer ? spec_for_kind(arch, *ref, layer_kind(config, *ref->layer)) : ref->spec;
    if (row == nullptr) return std::nullopt;
    const TensorSpec& spec = *row;
    // A bias has the weight's ne without the row length: {rows}, or {rows, E} for stacked experts.
    if (ref->is_bias) {
        std::vector<int64_t> ne;
        for (uint8_t i = spec.rank > 1 ? 1 : 0; i < spec.rank; ++i)
            ne.push_back(resolve_dim(spec.ne[i], config));
        return ne;
    }
    std::vector<int64_t> ne;
    for (uint8_t i = 0; i < spec.rank; ++i) ne.push_back(resolve_dim(spec.ne[i], config));
    return ne;
}

std::vector<TensorRef> split_parts(const Architecture& arch, const TensorRef& ref) {
    std::vector<TensorRef> parts;
    if (ref.spec->rows != RowTransform::mla_k_b && ref.spec->rows != RowTransform::mla_v_b &&
        ref.spec->rows != RowTransform::first_half_rows &&
        ref.spec->rows != RowTransform::qkvz_qkv &&
        ref.spec->rows != RowTransform::experts_t_first_half)
        return parts;
    bool after = false;
    for (const TensorSpec& spec : arch.layer) {
        if (&spec == ref.spec) {
            after = true;
            continue;
        }
        if (after && spec.hf == ref.spec->hf)
            if (auto part = make_ref(arch, spec, ref.layer, ref.is_bias)) {
                part->hf_name = ref.hf_name;
                parts.push_back(std::move(*part));
            }
    }
    return parts;
}

namespace {

// Appends the GGUF name(s) `spec` requires (on `layer`, or outside the layers).
void add_required(const Architecture& arch, const ModelConfig& config, const TensorSpec& spec,
                  std::optional<uint32_t> layer, std::vector<std::string>& names) {
    if (spec.weight == Presence::required ||
        (spec.weight == Presence::required_unless_tied && !config.tie_word_embeddings) ||
        (spec.weight == Presence::required_with_moe_latent && config.moe_latent_size) ||
        (spec.weight == Presence::required_with_per_layer_input &&
         config.per_layer_input_width != 0))
        names.push_back(make_ref(arch, spec, layer, false)->gguf_name);
}

}  // namespace

std::vector<std::string> required_mtp_tensors(const Architecture& arch, const ModelConfig& config) {
    std::vector<std::string> names;
    for (uint32_t layer = config.num_hidden_layers;
         layer < config.num_hidden_layers + config.nextn_layers; ++layer)
        for (const TensorSpec& spec : arch.layer)
            if (holds(spec, layer_kind(config, layer)) && !spec.trunk_only)
                add_required(arch, config, spec, layer, names);
    return names;
}

std::vector<std::string> required_tensors(const Architecture& arch, const ModelConfig& config) {
    std::vector<std::string> names;
    const auto add = [&](const TensorSpec& spec, std::optional<uint32_t> layer) {
        add_required(arch, config, spec, layer, names);
    };
    for (const TensorSpec& spec : arch.model_first) add(spec, std::nullopt);
    // The multi-token-prediction layers after them are optional (the converter keeps what the
    // checkpoint has; llama.cpp loads them only on request).
    for (uint32_t layer = 0; layer < config.num_hidden_layers; ++layer)
        for (const TensorSpec& spec : arch.layer)
            if (holds(spec, layer_kind(config, layer))) add(spec, layer);
    for (const TensorSpec& spec : arch.model_last) add(spec, std::nullopt);
    return names;
}

std::vector<std::string> required_alternatives(std::string_view gguf_name) {
    constexpr std::string_view kFused = ".ffn_gate_up_exps.weight";
    if (!gguf_name.ends_with(kFused)) return {};
    const std::string stem(gguf_name.substr(0, gguf_name.size() - kFused.size()));
    return {stem + ".ffn_gate_exps.weight", stem + ".ffn_up_exps.weight"};
}

std::string expert_name(std::string_view pattern, uint32_t e) {
    std::string name(pattern);
    const size_t at = name.find(kExpertPlaceholder);
    if (at != std::string::npos) name.replace(at, kExpertPlaceholder.size(), std::to_string(e));
    return name;
}

std::string stacked_name(const TensorSpec& spec, uint32_t layer) {
    return std::string(kHfLayerPrefix) + std::to_string(layer) + "." +
           std::string(spec.stacked_hf) + ".weight";
}

bool has_experts(const Architecture& arch) {
    // An optional stacked row (gemma4's ModelOpt per-expert modules, beside a MoE block a dense
    // model lacks) does not make every model of the family a MoE one.
    for (const TensorSpec& spec : arch.layer)
        if (spec.role == SourceRole::experts && spec.weight != Presence::optional) return true;
    return false;
}

std::vector<std::string> config_problems(const Architecture& arch, const ModelConfig& config) {
    std::vector<std::string> problems;
    if (arch.config_checks) arch.config_checks(arch, config, problems);
    if (!has_experts(arch)) return problems;
    const std::string name(arch.gguf_arch);
    if (config.num_experts == 0)
        problems.push_back("num_experts (num_local_experts) is missing: a " + name +
                           " model needs its expert count");
    if (config.num_experts_per_tok == 0 || config.num_experts_per_tok > config.num_experts)
        problems.push_back("num_experts_per_tok " + std::to_string(config.num_experts_per_tok) +
                           " must be between 1 and num_experts " +
                           std::to_string(config.num_experts));
    for (const ArchKv key : arch.kvs) {
        if (key == ArchKv::expert_feed_forward_length && !config.moe_intermediate_size)
            problems.push_back("moe_intermediate_size is missing (the experts' width)");
        if (key == ArchKv::expert_shared_feed_forward_length &&
            !config.shared_expert_intermediate_size)
            problems.push_back(
                "shared_expert_intermediate_size is missing (the shared expert's width)");
    }
    // Dense layers between the MoE ones need other tensors per layer than the table lists.
    if (config.decoder_sparse_step && *config.decoder_sparse_step != 1)
        problems.push_back("decoder_sparse_step " + std::to_string(*config.decoder_sparse_step) +
                           " makes some layers dense; rebox supports only all-MoE layers (1)");
    if (!config.mlp_only_layers.empty())
        problems.push_back("mlp_only_layers lists " +
                           std::to_string(config.mlp_only_layers.size()) +
                           " dense layer(s); rebox supports only all-MoE layers (an empty list)");
    return problems;
}

std::optional<int64_t> layer_of(std::string_view gguf_name) {
    if (!gguf_name.starts_with(kGgufLayerPrefix)) return std::nullopt;
    uint32_t layer = 0;
    std::string_view rest;
    if (!split_layer_index(gguf_name.substr(kGgufLayerPrefix.size()), &layer, &rest))
        return std::nullopt;
    return layer;
}

std::pair<int64_t, int> output_rank(const Architecture& arch, std::string_view gguf_name) {
    constexpr int64_t kLast = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < arch.extras.size(); ++i)
        if (extra_tensor_name(arch.extras[i]) == gguf_name) return {-2, static_cast<int>(i)};
    const auto ref = resolve_gguf(arch, gguf_name);
    const auto position = [&](std::span<const TensorSpec> table) {
        return static_cast<int>(2 * (ref->spec - table.data()) + (ref->is_bias ? 1 : 0));
    };
    if (ref && ref->layer) return {*ref->layer, position(arch.layer)};
    if (ref && ref->spec >= arch.model_first.data() &&
        ref->spec < arch.model_first.data() + arch.model_first.size())
        return {-1, position(arch.model_first)};
    if (ref) return {kLast, position(arch.model_last)};
    if (const auto layer = layer_of(gguf_name))
        return {*layer, static_cast<int>(2 * arch.layer.size())};
    return {kLast - 1, 0};
}

uint32_t transform_heads(RowTransform transform, const ModelConfig& config) {
    switch (transform) {
        case RowTransform::none:
            return 0;
        case RowTransform::rope_pairs_q_heads:
            return config.num_attention_heads;
        case RowTransform::rope_pairs_kv_heads:
            return config.num_key_value_heads;
        case RowTransform::first_vocab_rows:
        case RowTransform::even_rows:
        case RowTransform::odd_rows:
        case RowTransform::first_half_rows:
        case RowTransform::second_half_rows:
        case RowTransform::skip_position_offset:
        case RowTransform::v_heads_after_qk:
        case RowTransform::v_heads_rows:
        case RowTransform::v_heads_single:
        case RowTransform::v_heads_columns:
        case RowTransform::qkvz_qkv:
        case RowTransform::qkvz_z:
        case RowTransform::experts_t_first_half:
        case RowTransform::experts_t_second_half:
        case RowTransform::experts_t:
        case RowTransform::fused_gate_rows:
        case RowTransform::fused_up_rows:
            return 0;
        case RowTransform::mla_k_b:
        case RowTransform::mla_v_b:
            return config.num_attention_heads;
    }
    return 0;
}

std::string_view extra_tensor_name(ExtraTensor extra) {
    switch (extra) {
        case ExtraTensor::rope_freqs_llama3:
            return "rope_freqs.weight";
        case ExtraTensor::rope_factors_long:
            return "rope_factors_long.weight";
        case ExtraTensor::rope_factors_short:
            return "rope_factors_short.weight";
        case ExtraTensor::rope_freqs_proportional:
            return "rope_freqs.weight";
    }
    return "";
}

std::string explain_dim(Dim dim, const ModelConfig& c) {
    const std::string heads = "num_attention_heads " + std::to_string(c.num_attention_heads);
    const std::string kv_heads = "num_key_value_heads " + std::to_string(c.num_key_value_heads);
    const std::string head_dim = "head_dim " + std::to_string(c.head_dim);
    const std::string ffn = "intermediate_size " + std::to_string(c.intermediate_size);
    std::string formula;
    switch (dim) {
        case Dim::hidden:
            return "hidden_size " + std::to_string(c.hidden_size);
        case Dim::vocab:
            return "vocab_size " + std::to_string(c.vocab_size);
        case Dim::ffn:
            return ffn;
        case Dim::head_dim:
            return head_dim;
        case Dim::q_width:
            formula = heads + " * " + head_dim;
            break;
        case Dim::kv_width:
            formula = kv_heads + " * " + head_dim;
            break;
        case Dim::qkv_width:
            formula = heads + " * " + head_dim + " + 2 * " + kv_heads + " * " + head_dim;
            break;
        case Dim::ffn_x2:
            formula = "2 * " + ffn;
            break;
        case Dim::experts:
            return "num_experts " + std::to_string(c.num_experts);
        case Dim::expert_ffn:
            return c.moe_intermediate_size
                       ? "moe_intermediate_size " + std::to_string(*c.moe_intermediate_size)
                       : ffn;
        case Dim::shared_ffn:
            return "shared_expert_intermediate_size " +
                   std::to_string(c.shared_expert_intermediate_size.value_or(0));
        case Dim::one:
            return "1";
        case Dim::positions:
            return "max_position_embeddings " + std::to_string(c.max_position_embeddings);
        case Dim::token_types:
            return "type_vocab_size " + std::to_string(c.type_vocab_size);
        case Dim::labels:
            return "the classifier's labels (id2label / num_labels) " +
                   std::to_string(c.num_labels);
        case Dim::heads:
            return heads;
        case Dim::dense_2_out:
            return (c.dense_2 && !c.dense_2->origin.empty() ? c.dense_2->origin
                                                            : std::string("2_Dense/config.json")) +
                   " out_features " + std::to_string(c.dense_2 ? c.dense_2->out : 0);
        case Dim::dense_3_in:
            return (c.dense_3 && !c.dense_3->origin.empty() ? c.dense_3->origin
                                                            : std::string("3_Dense/config.json")) +
                   " in_features " + std::to_string(c.dense_3 ? c.dense_3->in : 0);
        case Dim::q_width_x2:
            formula = "2 * " + heads + " * " + head_dim + " (query and gate)";
            break;
        case Dim::hidden_x2:
            formula = "2 * hidden_size " + std::to_string(c.hidden_size);
            break;
        case Dim::lin_qkv_width:
            formula =
                "2 * linear_num_key_heads * linear_key_head_dim + linear_num_value_heads * "
                "linear_value_head_dim";
            break;
        case Dim::lin_v_width:
            formula = "linear_num_value_heads * linear_value_head_dim";
            break;
        case Dim::lin_v_heads:
            return "linear_num_value_heads " + std::to_string(resolve_dim(dim, c));
        case Dim::lin_v_head_dim:
            return "linear_value_head_dim " + std::to_string(resolve_dim(dim, c));
        case Dim::lin_conv_width:
            return "linear_conv_kernel_dim " + std::to_string(resolve_dim(dim, c));
        case Dim::lin_v_heads_x2:
            formula = "2 * linear_num_value_heads (beta and alpha)";
            break;
        case Dim::shared_experts_ffn:
            formula = "moe_intermediate_size " +
                      std::to_string(c.moe_intermediate_size.value_or(0)) + " * n_shared_experts " +
                      std::to_string(c.n_shared_experts.value_or(0));
            break;
        case Dim::expert_ffn_x2:
            formula = "2 * moe_intermediate_size " +
                      std::to_string(c.moe_intermediate_size.value_or(0)) + " (gate and up)";
            break;
        case Dim::ssm_inner:
            formula = "mamba_num_heads * mamba_head_dim";
            break;
        case Dim::ssm_conv_channels:
            formula = "mamba_num_heads * mamba_head_dim + 2 * n_groups * ssm_state_size";
            break;
        case Dim::ssm_in_width:
            formula =
                "2 * mamba_num_heads * mamba_head_dim + 2 * n_groups * ssm_state_size + "
                "mamba_num_heads";
            break;
        case Dim::ssm_heads:
            return "mamba_num_heads " + std::to_string(resolve_dim(dim, c));
        case Dim::ssm_groups:
            return "n_groups " + std::to_string(resolve_dim(dim, c));
        case Dim::ssm_group_width:
            formula = "mamba_num_heads * mamba_head_dim / n_groups";
            break;
        case Dim::ssm_conv_kernel:
            return "conv_kernel " + std::to_string(resolve_dim(dim, c));
        case Dim::head_dim_full:
            return "global_head_dim " + std::to_string(resolve_dim(dim, c));
        case Dim::q_width_full:
            formula =
                heads + " * global_head_dim " + std::to_string(resolve_dim(Dim::head_dim_full, c));
            break;
        case Dim::kv_width_full:
            formula =
                "the full-attention layers' key/value heads (num_global_key_value_heads, else "
                "num_key_value_heads) * global_head_dim " +
                std::to_string(resolve_dim(Dim::head_dim_full, c));
            break;
        case Dim::q_lora:
            return "q_lora_rank " + std::to_string(resolve_dim(dim, c));
        case Dim::kv_lora:
            return "kv_lora_rank " + std::to_string(resolve_dim(dim, c));
        case Dim::mla_nope:
            return "qk_nope_head_dim " + std::to_string(resolve_dim(dim, c));
        case Dim::mla_v:
            return "v_head_dim " + std::to_string(resolve_dim(dim, c));
        case Dim::kv_a_width:
            formula = "kv_lora_rank + qk_rope_head_dim";
            break;
        case Dim::q_mla_width:
            formula = heads + " * (qk_nope_head_dim + qk_rope_head_dim)";
            break;
        case Dim::o_mla_width:
            formula = heads + " * v_head_dim";
            break;
        case Dim::moe_latent:
            return "moe_latent_size " + std::to_string(resolve_dim(dim, c));
        case Dim::expert_width:
            return c.moe_latent_size ? "moe_latent_size " + std::to_string(*c.moe_latent_size)
                                     : "hidden_size " + std::to_string(c.hidden_size);
        case Dim::per_layer_input:
            return "hidden_size_per_layer_input " + std::to_string(c.per_layer_input_width);
        case Dim::per_layer_input_all:
            formula = "hidden_size_per_layer_input " + std::to_string(c.per_layer_input_width) +
                      " * num_hidden_layers " + std::to_string(c.num_hidden_layers);
            break;
    }
    return formula + " = " + std::to_string(resolve_dim(dim, c));
}

std::optional<std::array<Dim, 3>> tensor_dims(const Architecture& arch, std::string_view gguf_name,
                                              const ModelConfig* config) {
    const auto ref = resolve_gguf(arch, gguf_name);
    if (!ref) return std::nullopt;
    const TensorSpec* row = config && ref->layer
                                ? spec_for_kind(arch, *ref, layer_kind(*config, *ref->layer))
                                : ref->spec;
    if (row == nullptr) return std::nullopt;
    const TensorSpec& spec = *row;
    if (ref->is_bias || spec.rank == 1) {
        const Dim rows = spec.ne[spec.rank - 1];
        return std::array<Dim, 3>{rows, rows, rows};
    }
    return spec.ne;
}

uint32_t rotary_dimension_count(const ModelConfig& config) {
    double fraction = 1.0;
    if (config.rope_scaling && config.rope_scaling->partial_rotary_factor)
        fraction = *config.rope_scaling->partial_rotary_factor;
    else if (config.partial_rotary_factor)
        fraction = *config.partial_rotary_factor;
    // int(rot_pct * n_embd) // n_head: the product in double, truncated, then floor division.
    const double product = fraction * double(config.hidden_size);
    if (!(product >= 0.0) || product >= 4294967296.0 || config.num_attention_heads == 0) return 0;
    return static_cast<uint32_t>(static_cast<uint64_t>(product) / config.num_attention_heads);
}

std::optional<uint32_t> original_context_length(const ModelConfig& config) {
    if (config.rope_scaling && config.rope_scaling->original_max_position_embeddings)
        return config.rope_scaling->original_max_position_embeddings;
    return config.original_max_position_embeddings;
}

RopeScalingPlan plan_rope_scaling(const Architecture& arch, const ModelConfig& config) {
    RopeScalingPlan plan;
    // Phi3MiniModel reads rope_parameters["original_max_position_embeddings"] unconditionally.
    if (has_kv(arch, ArchKv::rope_scaling_original_context_length) &&
        !original_context_length(config)) {
        plan.blocker_field = "config.json: original_max_position_embeddings";
        plan.blocker = "missing (also not in rope_scaling): " + std::string(arch.gguf_arch) +
                       ".rope.scaling.original_context_length has no value";
        return plan;
    }
    if (!config.rope_scaling) return plan;
    const RopeScalingConfig& scaling = *config.rope_scaling;
    const std::string lower = lowercase(scaling.type);
    const bool llama3_freqs = has_extra(arch, ExtraTensor::rope_freqs_llama3);
    if (has_extra(arch, ExtraTensor::rope_freqs_proportional)) {
        // Gemma4Model.generate_extra_tensors asserts the full layers' rope_type "proportional";
        // TextModel writes no rope.scaling KV for it.
        if (scaling.type == "proportional") {
            plan.rope_freqs = true;
            plan.rope_freqs_kind = ExtraTensor::rope_freqs_proportional;
        } else {
            plan.blocker = "rope_scaling type '" + scaling.type + "' is not supported for " +
                           std::string(arch.gguf_arch) +
                           " (its full-attention layers' rope_type must be proportional)";
        }
        return plan;
    }
    if (has_extra(arch, ExtraTensor::rope_factors_long)) {
        // Phi3MiniModel.set_gguf_parameters writes no rope.scaling.type/factor; only the long
        // rope of generate_extra_tensors is carried.
        if (lower == "longrope" || lower == "su")
            plan_long_rope(config, scaling, &plan);
        else
            plan.blocker = "rope_scaling type '" + scaling.type + "' is not supported for " +
                           std::string(arch.gguf_arch) +
                           " (supported: longrope, su with long_factor and short_factor)";
        return plan;
    }
    // convert_hf_to_gguf (TextModel.set_gguf_parameters): "linear" with a factor writes the
    // scaling type and factor; LlamaModel.generate_extra_tensors handles "llama3" (any case).
    if (scaling.type == "linear" && scaling.factor) {
        plan.kv_type = "linear";
        plan.kv_factor = static_cast<float>(*scaling.factor);
    } else if (lower == "llama3" && llama3_freqs) {
        plan.rope_freqs = true;
    } else if (scaling.type == "yarn" && scaling.factor && arch.rope_yarn) {
        // TextModel.set_gguf_parameters: type, factor, original_max_position_embeddings (read
        // unconditionally), then extrapolation_factor, attention_factor (or attn_factor),
        // beta_fast and beta_slow, each when present.
        if (!scaling.original_max_position_embeddings) {
            plan.blocker_field = "config.json: rope_scaling.original_max_position_embeddings";
            plan.blocker = "missing: yarn needs the original context length";
            return plan;
        }
        plan.kv_type = "yarn";
        plan.kv_factor = static_cast<float>(*scaling.factor);
        plan.yarn_original_context = scaling.original_max_position_embeddings;
        if (scaling.extrapolation_factor)
            plan.yarn_ext_factor = static_cast<float>(*scaling.extrapolation_factor);
        if (scaling.attention_factor)
            plan.yarn_attn_factor = static_cast<float>(*scaling.attention_factor);
        if (scaling.beta_fast) plan.yarn_beta_fast = static_cast<float>(*scaling.beta_fast);
        if (scaling.beta_slow) plan.yarn_beta_slow = static_cast<float>(*scaling.beta_slow);
    } else {
        plan.blocker = "rope_scaling type '" + scaling.type + "' is not supported for " +
                       std::string(arch.gguf_arch) +
                       (llama3_freqs ? " (supported: llama3, linear with a factor)"
                                     : " (supported: linear with a factor)");
    }
    return plan;
}

}  // namespace rebox::arch
