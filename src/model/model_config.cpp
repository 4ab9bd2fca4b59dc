// config.json -> ModelConfig: required hyper-parameters, documented defaults, strict JSON types;
// no architecture's own rules (arch/read_config.cpp applies them).
#include "model/model_config.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "rebox/error.hpp"

namespace rebox {
namespace {

using nlohmann::json;

constexpr const char* kFile = "config.json";

[[noreturn]] void fail(const std::string& field, const std::string& what,
                       const std::string& expected = "") {
    throw_input_error(kFile, field, what, expected);
}

// A positive integer that fits uint32 (JSON numbers like 1024.0 are refused: HF writes integers).
uint32_t positive_u32(const json& value, const std::string& field) {
    if (!value.is_number_integer()) fail(field, "expected an unsigned integer");
    if (value.is_number_unsigned()) {
        const uint64_t v = value.get<uint64_t>();
        if (v == 0) fail(field, "is 0", "a value > 0");
        if (v > std::numeric_limits<uint32_t>::max())
            fail(field, "value " + std::to_string(v) + " is too large", "a value <= 4294967295");
        return static_cast<uint32_t>(v);
    }
    const int64_t v = value.get<int64_t>();
    if (v <= 0) fail(field, "value " + std::to_string(v) + " is not positive", "a value > 0");
    if (v > int64_t{std::numeric_limits<uint32_t>::max()})
        fail(field, "value " + std::to_string(v) + " is too large", "a value <= 4294967295");
    return static_cast<uint32_t>(v);
}

const json& required(const json& root, const std::string& field) {
    const auto it = root.find(field);
    if (it == root.end() || it->is_null()) fail(field, "missing");
    return *it;
}

uint32_t required_u32(const json& root, const std::string& field) {
    return positive_u32(required(root, field), field);
}

std::optional<uint32_t> optional_u32(const json& root, const std::string& field) {
    const auto it = root.find(field);
    if (it == root.end() || it->is_null()) return std::nullopt;
    return positive_u32(*it, field);
}

// A finite, positive float that survives the cast to FLOAT32 (GGUF stores these as FLOAT32).
std::optional<float> optional_positive_float(const json& root, const std::string& field) {
    const auto it = root.find(field);
    if (it == root.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) fail(field, "expected a number");
    const double v = it->get<double>();
    const float f = static_cast<float>(v);
    if (!std::isfinite(f) || !(f > 0.0f))
        fail(field, "value " + it->dump() + " is not a finite positive float32");
    return f;
}

std::optional<bool> optional_bool(const json& root, const std::string& field) {
    const auto it = root.find(field);
    if (it == root.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) fail(field, "expected a boolean");
    return it->get<bool>();
}

std::optional<std::string> optional_string(const json& root, const std::string& field) {
    const auto it = root.find(field);
    if (it == root.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) fail(field, "expected a string");
    return it->get<std::string>();
}

// Hyper-parameters only some architectures write (gemma's softcapping and sliding window): other
// families' configs carry the same names with values of their own (sliding_window 0 or null), so a
// value that is not a positive number is treated as absent instead of refused.
std::optional<uint32_t> lenient_u32(const json& root, const std::string& field) {
    const auto it = root.find(field);
    if (it == root.end() || !it->is_number_integer()) return std::nullopt;
    if (it->is_number_unsigned()) {
        const uint64_t v = it->get<uint64_t>();
        if (v == 0 || v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
        return static_cast<uint32_t>(v);
    }
    const int64_t v = it->get<int64_t>();
    if (v <= 0 || v > int64_t{std::numeric_limits<uint32_t>::max()}) return std::nullopt;
    return static_cast<uint32_t>(v);
}

std::optional<float> lenient_float(const json& root, const std::string& field) {
    const auto it = root.find(field);
    if (it == root.end() || !it->is_number()) return std::nullopt;
    const float f = static_cast<float>(it->get<double>());
    if (!std::isfinite(f) || !(f > 0.0f)) return std::nullopt;
    return f;
}

// bos/eos_token_id: an integer id. A list (Llama-3.1 style) is ignored, as gguf-py's SpecialVocab
// does.
std::optional<uint32_t> optional_token_id(const json& root, const std::string& field) {
    const auto it = root.find(field);
    if (it == root.end() || it->is_null() || it->is_array()) return std::nullopt;
    const json& value = *it;
    if (!value.is_number_unsigned() || value.get<uint64_t>() > std::numeric_limits<uint32_t>::max())
        fail(field, "expected an unsigned integer token id");
    return static_cast<uint32_t>(value.get<uint64_t>());
}

std::optional<double> optional_number(const json& object, const std::string& parent,
                                      const std::string& field) {
    const auto it = object.find(field);
    if (it == object.end() || it->is_null()) return std::nullopt;
    if (!it->is_number() || !std::isfinite(it->get<double>()))
        fail(parent + "." + field, "expected a finite number");
    return it->get<double>();
}

// A JSON array of finite numbers (rope_scaling.long_factor / short_factor).
std::optional<std::vector<double>> optional_numbers(const json& object, const std::string& parent,
                                                    const std::string& field) {
    const auto it = object.find(field);
    if (it == object.end() || it->is_null()) return std::nullopt;
    if (!it->is_array()) fail(parent + "." + field, "expected an array of numbers");
    std::vector<double> values;
    for (const json& item : *it) {
        if (!item.is_number() || !std::isfinite(item.get<double>()))
            fail(parent + "." + field,
                 "entry " + std::to_string(values.size()) + " is not a finite number");
        values.push_back(item.get<double>());
    }
    return values;
}

// "rope_scaling" (transformers <= 4) or "rope_parameters" (transformers 5, which also moves
// rope_theta there); the type is "rope_type" or the older "type".
// Gemma 3 under transformers 5 splits rope_parameters into "full_attention" (the global layers:
// their theta and scaling, which is what TextModel.set_gguf_parameters writes) and
// "sliding_attention" (the local layers' theta).
std::optional<RopeScalingConfig> read_rope_scaling(const json& root, float* rope_theta,
                                                   std::optional<float>* local_theta) {
    const char* field = root.contains("rope_parameters") ? "rope_parameters" : "rope_scaling";
    const auto it = root.find(field);
    if (it == root.end() || it->is_null()) return std::nullopt;
    if (!it->is_object()) fail(field, "expected an object or null");
    if (const auto sliding = it->find("sliding_attention");
        sliding != it->end() && sliding->is_object())
        if (const auto theta = optional_positive_float(*sliding, "rope_theta"))
            *local_theta = theta;
    const auto full = it->find("full_attention");
    if (full != it->end() && !full->is_object())
        fail(std::string(field) + ".full_attention", "expected an object");
    const json& params = full != it->end() ? *full : *it;
    // TextModel mirrors the top-level rope_theta into rope_parameters only when it has none: the
    // block's own theta wins (and a gemma3 default for the top level never hides it).
    if (const auto theta = optional_positive_float(params, "rope_theta")) *rope_theta = *theta;
    std::optional<std::string> type = optional_string(params, "rope_type");
    if (!type) type = optional_string(params, "type");
    if (!type || *type == "default") return std::nullopt;
    RopeScalingConfig scaling;
    scaling.type = *type;
    scaling.factor = optional_number(params, field, "factor");
    scaling.low_freq_factor = optional_number(params, field, "low_freq_factor");
    scaling.high_freq_factor = optional_number(params, field, "high_freq_factor");
    scaling.original_max_position_embeddings =
        optional_u32(params, "original_max_position_embeddings");
    scaling.long_factor = optional_numbers(params, field, "long_factor");
    scaling.short_factor = optional_numbers(params, field, "short_factor");
    scaling.partial_rotary_factor = optional_number(params, field, "partial_rotary_factor");
    scaling.beta_fast = optional_number(params, field, "beta_fast");
    scaling.beta_slow = optional_number(params, field, "beta_slow");
    scaling.extrapolation_factor = optional_number(params, field, "extrapolation_factor");
    scaling.attention_factor = optional_number(params, field, "attention_factor");
    if (!scaling.attention_factor)
        scaling.attention_factor = optional_number(params, field, "attn_factor");
    return scaling;
}

// id2label {"0": "LABEL_0", ...}: the labels in id order; the ids must be 0..n-1 (as transformers
// numbers a classifier's outputs). Absent or null: empty.
std::vector<std::string> read_id2label(const json& root) {
    constexpr size_t kMaxLabels = 1 << 16;
    const auto it = root.find("id2label");
    if (it == root.end() || it->is_null()) return {};
    if (!it->is_object()) fail("id2label", "expected an object of id -> label");
    if (it->size() > kMaxLabels)
        fail("id2label",
             std::to_string(it->size()) + " labels is more than " + std::to_string(kMaxLabels));
    std::vector<std::string> labels(it->size());
    std::vector<bool> seen(it->size(), false);
    for (const auto& [key, value] : it->items()) {
        size_t id = 0;
        const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
        if (ec != std::errc() || end != key.data() + key.size() || id >= labels.size() || seen[id])
            fail("id2label",
                 "key '" + key + "' is not one of the ids 0.." + std::to_string(labels.size() - 1));
        if (!value.is_string()) fail("id2label." + key, "expected a string label");
        labels[id] = value.get<std::string>();
        seen[id] = true;
    }
    return labels;
}

}  // namespace

std::optional<uint32_t> config_token_id(const json& root, const std::string& field) {
    return optional_token_id(root, field);
}

void merge_text_config(json& root) {
    if (const auto text = root.find("text_config"); text != root.end() && !text->is_null()) {
        if (!text->is_object()) fail("text_config", "expected an object");
        const json text_config = *text;
        for (const auto& [key, value] : text_config.items()) root[key] = value;
    }
}

void read_config_identity(const json& root, ModelConfig& config) {
    const json& model_type = required(root, "model_type");
    if (!model_type.is_string()) fail("model_type", "expected a string");
    config.model_type = model_type.get<std::string>();
    if (const auto it = root.find("architectures"); it != root.end() && !it->is_null()) {
        if (!it->is_array()) fail("architectures", "expected an array of strings");
        for (const json& item : *it) {
            if (!item.is_string()) fail("architectures", "expected an array of strings");
            config.architectures.push_back(item.get<std::string>());
        }
    }
}

void read_config_fields(const json& root, ModelConfig& config) {
    config.hidden_size = required_u32(root, "hidden_size");
    config.num_hidden_layers = required_u32(root, "num_hidden_layers");
    config.num_attention_heads = required_u32(root, "num_attention_heads");
    config.intermediate_size = required_u32(root, "intermediate_size");
    config.vocab_size = required_u32(root, "vocab_size");
    config.num_key_value_heads =
        optional_u32(root, "num_key_value_heads").value_or(config.num_attention_heads);

    if (const auto head_dim = optional_u32(root, "head_dim")) {
        config.head_dim = *head_dim;
        config.head_dim_given = true;
    } else {
        if (config.hidden_size % config.num_attention_heads != 0)
            fail("head_dim", "missing and hidden_size " + std::to_string(config.hidden_size) +
                                 " is not a multiple of num_attention_heads " +
                                 std::to_string(config.num_attention_heads));
        config.head_dim = config.hidden_size / config.num_attention_heads;
    }
    if (config.num_attention_heads % config.num_key_value_heads != 0)
        fail("num_key_value_heads",
             "num_attention_heads " + std::to_string(config.num_attention_heads) +
                 " is not a multiple of " + std::to_string(config.num_key_value_heads));

    // Context length: convert_hf_to_gguf's search order (TextModel.set_gguf_parameters).
    std::optional<uint32_t> context;
    for (const char* field : {"max_position_embeddings", "n_ctx", "n_positions", "max_length",
                              "max_sequence_length", "model_max_length"}) {
        if ((context = optional_u32(root, field))) break;
    }
    if (!context)
        fail("max_position_embeddings",
             "missing (also no n_ctx / n_positions / max_sequence_length)");
    config.max_position_embeddings = *context;

    config.rope_theta = optional_positive_float(root, "rope_theta").value_or(10000.0f);
    config.rms_norm_eps = optional_positive_float(root, "rms_norm_eps").value_or(1e-6f);
    config.tie_word_embeddings = optional_bool(root, "tie_word_embeddings").value_or(false);
    config.bos_token_id = optional_token_id(root, "bos_token_id");
    config.eos_token_id = optional_token_id(root, "eos_token_id");
    config.name_or_path = optional_string(root, "_name_or_path").value_or("");
    for (const char* field :
         {"local_rope_theta", "rope_local_theta", "rope_theta_local", "rope_local_base_freq"})
        if ((config.rope_local_theta = lenient_float(root, field))) break;
    config.rope_scaling = read_rope_scaling(root, &config.rope_theta, &config.rope_local_theta);
    config.attn_logit_softcapping = lenient_float(root, "attn_logit_softcapping");
    config.final_logit_softcapping = lenient_float(root, "final_logit_softcapping");
    config.sliding_window = lenient_u32(root, "sliding_window");
    config.sliding_window_pattern = lenient_u32(root, "sliding_window_pattern");

    // convert_hf_to_gguf's search order for the expert counts (TextModel.set_gguf_parameters).
    config.num_experts = optional_u32(root, "num_local_experts")
                             .value_or(optional_u32(root, "num_experts").value_or(0));
    config.num_experts_per_tok = optional_u32(root, "num_experts_per_tok").value_or(0);
    config.moe_intermediate_size = optional_u32(root, "moe_intermediate_size");
    config.shared_expert_intermediate_size = optional_u32(root, "shared_expert_intermediate_size");
    config.decoder_sparse_step = optional_u32(root, "decoder_sparse_step");
    if (const auto it = root.find("mlp_only_layers"); it != root.end() && !it->is_null()) {
        if (!it->is_array()) fail("mlp_only_layers", "expected an array of layer indices");
        for (const json& item : *it) {
            if (!item.is_number_unsigned() ||
                item.get<uint64_t>() > std::numeric_limits<uint32_t>::max())
                fail("mlp_only_layers", "expected an array of layer indices");
            config.mlp_only_layers.push_back(static_cast<uint32_t>(item.get<uint64_t>()));
        }
    }
    config.original_max_position_embeddings =
        optional_u32(root, "original_max_position_embeddings");
    config.partial_rotary_factor = optional_number(root, "config", "partial_rotary_factor");
    config.swiglu_limit = optional_number(root, "config", "swiglu_limit");
    if (const auto it = root.find("layer_types"); it != root.end() && !it->is_null()) {
        if (!it->is_array()) fail("layer_types", "expected an array of strings");
        for (const json& item : *it) {
            if (!item.is_string()) fail("layer_types", "expected an array of strings");
            config.layer_types.push_back(item.get<std::string>());
        }
    }
    for (const char* field : {"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"})
        if ((config.layer_norm_eps = optional_positive_float(root, field))) break;
    config.type_vocab_size = optional_u32(root, "type_vocab_size").value_or(0);
    config.hidden_activation = optional_string(root, "hidden_activation");
    config.id2label = read_id2label(root);
    config.num_labels = config.id2label.empty() ? optional_u32(root, "num_labels").value_or(2)
                                                : static_cast<uint32_t>(config.id2label.size());
}

}  // namespace rebox
