// The registry's lookups and the table walks every architecture shares: name mapping both ways,
// ne from config.json, required tensors, output order, rope_scaling policy.
#include <charconv>
#include <limits>

#include "arch_tables.hpp"

namespace rebox::arch {
namespace {

constexpr std::string_view kModelPrefix = "model.";
constexpr std::string_view kLanguageModel = "language_model.";
constexpr std::string_view kHfLayerPrefix = "layers.";
constexpr std::string_view kGgufLayerPrefix = "blk.";

const Architecture* const kArchitectures[] = {
    &detail::qwen3_architecture(), &detail::qwen2_architecture(),  &detail::llama_architecture(),
    &detail::gemma_architecture(), &detail::gemma2_architecture(), &detail::gemma3_architecture(),
};

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
    return (is_bias ? spec.bias : spec.weight) != Presence::absent;
}

std::optional<TensorRef> make_ref(const TensorSpec& spec, std::optional<uint32_t> layer,
                                  bool is_bias) {
    TensorRef ref;
    ref.spec = &spec;
    ref.layer = layer;
    ref.is_bias = is_bias;
    const std::string suffix = is_bias ? ".bias" : ".weight";
    if (layer) {
        const std::string index = std::to_string(*layer) + ".";
        ref.gguf_name = std::string(kGgufLayerPrefix) + index + std::string(spec.gguf) + suffix;
        ref.hf_name = std::string(kHfLayerPrefix) + index + std::string(spec.hf) + suffix;
    } else {
        ref.gguf_name = std::string(spec.gguf) + suffix;
        ref.hf_name = std::string(spec.hf) + suffix;
    }
    return ref;
}

std::optional<TensorRef> resolve(const Architecture& arch, std::string_view name, bool from_hf) {
    std::string_view stem;
    bool is_bias = false;
    if (!split_suffix(name, &stem, &is_bias)) return std::nullopt;
    const auto side = [from_hf](const TensorSpec& spec) { return from_hf ? spec.hf : spec.gguf; };
    const std::string_view layer_prefix = from_hf ? kHfLayerPrefix : kGgufLayerPrefix;
    if (stem.starts_with(layer_prefix)) {
        uint32_t layer = 0;
        std::string_view rest;
        if (!split_layer_index(stem.substr(layer_prefix.size()), &layer, &rest))
            return std::nullopt;
        for (const TensorSpec& spec : arch.layer)
            if (side(spec) == rest && loads(spec, is_bias)) return make_ref(spec, layer, is_bias);
        return std::nullopt;
    }
    for (const auto table : {arch.model_first, arch.model_last})
        for (const TensorSpec& spec : table)
            if (side(spec) == stem && loads(spec, is_bias))
                return make_ref(spec, std::nullopt, is_bias);
    return std::nullopt;
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
    }
    return 0;
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
    const std::string stripped = strip_model_prefix(hf_name);
    for (const std::string_view prefix : arch.left_out_prefixes)
        if (stripped.starts_with(prefix)) return true;
    return false;
}

std::optional<TensorRef> resolve_hf(const Architecture& arch, std::string_view hf_name) {
    return resolve(arch, strip_model_prefix(hf_name), /*from_hf=*/true);
}

std::optional<TensorRef> resolve_gguf(const Architecture& arch, std::string_view gguf_name) {
    return resolve(arch, gguf_name, /*from_hf=*/false);
}

std::optional<std::vector<int64_t>> expected_ne(const Architecture& arch, const ModelConfig& config,
                                                std::string_view gguf_name) {
    const auto ref = resolve_gguf(arch, gguf_name);
    if (!ref) return std::nullopt;
    const TensorSpec& spec = *ref->spec;
    if (ref->is_bias) return std::vector<int64_t>{resolve_dim(spec.ne[spec.rank - 1], config)};
    std::vector<int64_t> ne;
    for (uint8_t i = 0; i < spec.rank; ++i) ne.push_back(resolve_dim(spec.ne[i], config));
    return ne;
}

std::vector<std::string> required_tensors(const Architecture& arch, const ModelConfig& config) {
    std::vector<std::string> names;
    const auto add = [&](const TensorSpec& spec, std::optional<uint32_t> layer) {
        if (spec.weight == Presence::required ||
            (spec.weight == Presence::required_unless_tied && !config.tie_word_embeddings))
            names.push_back(make_ref(spec, layer, false)->gguf_name);
    };
    for (const TensorSpec& spec : arch.model_first) add(spec, std::nullopt);
    for (uint32_t layer = 0; layer < config.num_hidden_layers; ++layer)
        for (const TensorSpec& spec : arch.layer) add(spec, layer);
    for (const TensorSpec& spec : arch.model_last) add(spec, std::nullopt);
    return names;
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
            return 0;
    }
    return 0;
}

std::string_view extra_tensor_name(ExtraTensor extra) {
    switch (extra) {
        case ExtraTensor::rope_freqs_llama3:
            return "rope_freqs.weight";
    }
    return "";
}

RopeScalingPlan plan_rope_scaling(const Architecture& arch, const ModelConfig& config) {
    RopeScalingPlan plan;
    if (!config.rope_scaling) return plan;
    const RopeScalingConfig& scaling = *config.rope_scaling;
    std::string lower;
    for (const char c : scaling.type)
        lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    bool llama3_freqs = false;
    for (const ExtraTensor extra : arch.extras)
        llama3_freqs |= extra == ExtraTensor::rope_freqs_llama3;
    // convert_hf_to_gguf (TextModel.set_gguf_parameters): "linear" with a factor writes the
    // scaling type and factor; LlamaModel.generate_extra_tensors handles "llama3" (any case).
    if (scaling.type == "linear" && scaling.factor) {
        plan.kv_type = "linear";
        plan.kv_factor = static_cast<float>(*scaling.factor);
    } else if (lower == "llama3" && llama3_freqs) {
        plan.rope_freqs = true;
    } else {
        plan.blocker = "rope_scaling type '" + scaling.type + "' is not supported for " +
                       std::string(arch.gguf_arch) +
                       (llama3_freqs ? " (supported: llama3, linear with a factor)"
                                     : " (supported: linear with a factor)");
    }
    return plan;
}

}  // namespace rebox::arch
