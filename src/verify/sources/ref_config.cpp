// config.json -> RefConfig, verify's own parser (see ref_config.hpp): strict JSON types, every
// count capped, the defaults transformers' config classes document for the fields a model leaves
// out, and convert_hf_to_gguf's search orders (TextModel.set_gguf_parameters) for the context
// length and expert count.
#include "verify/sources/ref_config.hpp"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "model/json_file.hpp"
#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& key, const std::string& what,
                       const std::string& expected = "") {
    throw_input_error("config.json", key, what, expected);
}

const json* find(const json& object, const std::string& key) {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

// A positive integer <= cap (1024.0 is refused: Hugging Face writes integers).
uint32_t count_value(const json& value, const std::string& key, uint64_t cap) {
    if (!value.is_number_integer()) fail(key, "expected an unsigned integer");
    if (!value.is_number_unsigned() && value.get<int64_t>() <= 0)
        fail(key, "value " + value.dump() + " is not positive", "a value > 0");
    const uint64_t v = value.get<uint64_t>();
    if (v == 0) fail(key, "is 0", "a value > 0");
    if (v > cap)
        fail(key, "value " + std::to_string(v) + " is over verify's cap",
             "at most " + std::to_string(cap));
    return static_cast<uint32_t>(v);
}

// id2label {"0": "LABEL_0", ...}: the labels in id order; every id 0..n-1 exactly once.
std::vector<std::string> read_labels(const json& root) {
    constexpr size_t kMaxLabels = 1 << 16;
    const json* labels = find(root, "id2label");
    if (labels == nullptr) return {};
    if (!labels->is_object()) fail("id2label", "expected an object of id -> label");
    if (labels->size() > kMaxLabels)
        fail("id2label",
             std::to_string(labels->size()) + " labels, at most " + std::to_string(kMaxLabels));
    std::vector<std::string> out(labels->size());
    std::vector<bool> seen(labels->size(), false);
    for (const auto& [key, value] : labels->items()) {
        size_t id = 0;
        bool digits = !key.empty() && key.size() < 8;
        for (const char ch : key) digits = digits && ch >= '0' && ch <= '9';
        if (digits) id = std::stoul(key);
        if (!digits || id >= out.size() || seen[id])
            fail("id2label",
                 "key '" + key + "' is not one of the ids 0.." + std::to_string(out.size() - 1));
        if (!value.is_string()) fail("id2label." + key, "expected a string label");
        out[id] = value.get<std::string>();
        seen[id] = true;
    }
    return out;
}

uint32_t required_count(const json& root, const std::string& key, uint64_t cap) {
    const json* value = find(root, key);
    if (value == nullptr) fail(key, "missing");
    return count_value(*value, key, cap);
}

std::optional<uint32_t> optional_count(const json& root, const std::string& key, uint64_t cap) {
    const json* value = find(root, key);
    if (value == nullptr) return std::nullopt;
    return count_value(*value, key, cap);
}

// Finite, positive and still so as binary32 (the GGUF stores FLOAT32).
std::optional<float> optional_float(const json& root, const std::string& key) {
    const json* value = find(root, key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number()) fail(key, "expected a number");
    const float f = static_cast<float>(value->get<double>());
    if (!std::isfinite(f) || !(f > 0.0f)) fail(key, value->dump() + " is not a positive float32");
    return f;
}

std::optional<double> optional_double(const json& object, const std::string& key,
                                      const std::string& shown_as) {
    const json* value = find(object, key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number() || !std::isfinite(value->get<double>()))
        fail(shown_as, "expected a finite number");
    return value->get<double>();
}

std::optional<std::string> optional_text(const json& object, const std::string& key) {
    const json* value = find(object, key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_string()) fail(key, "expected a string");
    return value->get<std::string>();
}

// Fields other families reuse with values of their own (sliding_window 0 or null, softcapping
// null): anything but a positive number reads as absent.
std::optional<uint32_t> loose_count(const json& root, const std::string& key) {
    const json* value = find(root, key);
    if (value == nullptr || !value->is_number_unsigned()) return std::nullopt;
    const uint64_t v = value->get<uint64_t>();
    if (v == 0 || v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
    return static_cast<uint32_t>(v);
}

std::optional<float> loose_float(const json& root, const std::string& key) {
    const json* value = find(root, key);
    if (value == nullptr || !value->is_number()) return std::nullopt;
    const float f = static_cast<float>(value->get<double>());
    if (!std::isfinite(f) || !(f > 0.0f)) return std::nullopt;
    return f;
}

std::optional<std::vector<double>> optional_factors(const json& object, const std::string& key,
                                                    const std::string& shown_as) {
    const json* value = find(object, key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_array()) fail(shown_as, "expected an array of numbers");
    if (value->size() > kMaxRopeFactors)
        fail(shown_as, std::to_string(value->size()) + " entries",
             "at most " + std::to_string(kMaxRopeFactors));
    std::vector<double> out;
    out.reserve(value->size());
    for (const json& item : *value) {
        if (!item.is_number() || !std::isfinite(item.get<double>()))
            fail(shown_as, "entry " + std::to_string(out.size()) + " is not a finite number");
        out.push_back(item.get<double>());
    }
    return out;
}

// rope_scaling (transformers 4) or rope_parameters (transformers 5, which may carry rope_theta,
// and for Gemma 3 splits into full_attention and sliding_attention blocks).
void read_rope(const json& root, RefConfig& config) {
    const std::string key = root.contains("rope_parameters") ? "rope_parameters" : "rope_scaling";
    const json* block = find(root, key);
    if (block == nullptr) return;
    if (!block->is_object()) fail(key, "expected an object or null");
    if (const json* sliding = find(*block, "sliding_attention"); sliding && sliding->is_object())
        if (const auto theta = optional_float(*sliding, "rope_theta"))
            config.rope_local_theta = theta;
    const json* full = find(*block, "full_attention");
    if (full != nullptr && !full->is_object()) fail(key + ".full_attention", "expected an object");
    const json& params = full ? *full : *block;
    if (const auto theta = optional_float(params, "rope_theta")) config.rope_theta = *theta;
    std::optional<std::string> type = optional_text(params, "rope_type");
    if (!type) type = optional_text(params, "type");
    if (!type || *type == "default") return;
    RefRopeScaling scaling;
    scaling.type = *type;
    scaling.factor = optional_double(params, "factor", key + ".factor");
    scaling.low_freq_factor = optional_double(params, "low_freq_factor", key + ".low_freq_factor");
    scaling.high_freq_factor =
        optional_double(params, "high_freq_factor", key + ".high_freq_factor");
    scaling.original_max_position_embeddings = optional_count(
        params, "original_max_position_embeddings", std::numeric_limits<uint32_t>::max());
    scaling.long_factor = optional_factors(params, "long_factor", key + ".long_factor");
    scaling.short_factor = optional_factors(params, "short_factor", key + ".short_factor");
    scaling.partial_rotary_factor =
        optional_double(params, "partial_rotary_factor", key + ".partial_rotary_factor");
    scaling.beta_fast = optional_double(params, "beta_fast", key + ".beta_fast");
    scaling.beta_slow = optional_double(params, "beta_slow", key + ".beta_slow");
    scaling.extrapolation_factor =
        optional_double(params, "extrapolation_factor", key + ".extrapolation_factor");
    scaling.attention_factor =
        optional_double(params, "attention_factor", key + ".attention_factor");
    if (!scaling.attention_factor)
        scaling.attention_factor = optional_double(params, "attn_factor", key + ".attn_factor");
    config.rope_scaling = std::move(scaling);
}

RefConfig parse_root(json root) {
    if (!root.is_object()) fail("", "expected a JSON object at the top level");
    if (const json* text = find(root, "text_config")) {
        if (!text->is_object()) fail("text_config", "expected an object");
        const json text_config = *text;
        for (const auto& [key, value] : text_config.items()) root[key] = value;
    }
    RefConfig c;
    const json* model_type = find(root, "model_type");
    if (model_type == nullptr) fail("model_type", "missing");
    if (!model_type->is_string()) fail("model_type", "expected a string");
    c.model_type = model_type->get<std::string>();
    // The architecture's own reading (verify/arch/): defaults and other names for its fields. A
    // record chosen by more than model_type (EmbeddingGemma) names the model type by its GGUF name.
    const RefArch* arch = select_ref_arch(root, c.model_type);
    if (arch != nullptr && arch->selects != nullptr) c.model_type = std::string(arch->gguf_arch);
    if (arch != nullptr && arch->prepare_config != nullptr) arch->prepare_config(root);
    c.intermediate_size_given = find(root, "intermediate_size") != nullptr;

    constexpr uint64_t kAnyU32 = std::numeric_limits<uint32_t>::max();
    c.hidden_size = required_count(root, "hidden_size", kMaxWidth);
    c.num_hidden_layers = required_count(root, "num_hidden_layers", kMaxLayers);
    c.num_attention_heads = required_count(root, "num_attention_heads", kMaxHeads);
    // Qwen3.5 MoE's config.json has no intermediate_size (its record says it may lack one).
    c.intermediate_size =
        c.intermediate_size_given || arch == nullptr || !arch->intermediate_size_optional
            ? required_count(root, "intermediate_size", kMaxWidth)
            : 0;
    c.vocab_size = required_count(root, "vocab_size", kMaxVocab);
    c.num_key_value_heads =
        optional_count(root, "num_key_value_heads", kMaxHeads).value_or(c.num_attention_heads);
    if (c.num_attention_heads % c.num_key_value_heads != 0)
        fail("num_key_value_heads", std::to_string(c.num_key_value_heads) + " does not divide " +
                                        std::to_string(c.num_attention_heads) + " heads");
    if (const auto head_dim = optional_count(root, "head_dim", kMaxHeadDim)) {
        c.head_dim = *head_dim;
        c.head_dim_given = true;
    } else if (c.hidden_size % c.num_attention_heads != 0) {
        fail("head_dim", "missing, and hidden_size is not a multiple of num_attention_heads");
    } else {
        c.head_dim = c.hidden_size / c.num_attention_heads;
        if (c.head_dim > kMaxHeadDim)
            fail("head_dim", "hidden_size / num_attention_heads is over verify's cap",
                 "at most " + std::to_string(kMaxHeadDim));
    }
    std::optional<uint32_t> context;
    for (const char* key : {"max_position_embeddings", "n_ctx", "n_positions", "max_length",
                            "max_sequence_length", "model_max_length"})
        if ((context = optional_count(root, key, kMaxPositions))) break;
    if (!context) fail("max_position_embeddings", "missing (also no n_ctx / n_positions / ...)");
    c.max_position_embeddings = *context;

    c.rope_theta = optional_float(root, "rope_theta").value_or(10000.0f);
    c.rms_norm_eps = optional_float(root, "rms_norm_eps").value_or(1e-6f);
    for (const char* key :
         {"local_rope_theta", "rope_local_theta", "rope_theta_local", "rope_local_base_freq"})
        if ((c.rope_local_theta = loose_float(root, key))) break;
    read_rope(root, c);
    c.attn_logit_softcapping = loose_float(root, "attn_logit_softcapping");
    c.final_logit_softcapping = loose_float(root, "final_logit_softcapping");
    c.sliding_window = loose_count(root, "sliding_window");
    c.sliding_window_pattern = loose_count(root, "sliding_window_pattern");

    c.num_experts = optional_count(root, "num_local_experts", kMaxExperts)
                        .value_or(optional_count(root, "num_experts", kMaxExperts).value_or(0));
    c.num_experts_per_tok = optional_count(root, "num_experts_per_tok", kMaxExperts).value_or(0);
    if (c.num_experts_per_tok > c.num_experts && c.num_experts > 0)
        fail("num_experts_per_tok", std::to_string(c.num_experts_per_tok) + " is more than the " +
                                        std::to_string(c.num_experts) + " experts");
    c.moe_intermediate_size = optional_count(root, "moe_intermediate_size", kMaxWidth);
    c.shared_expert_intermediate_size =
        optional_count(root, "shared_expert_intermediate_size", kMaxWidth);
    c.original_max_position_embeddings =
        optional_count(root, "original_max_position_embeddings", kAnyU32);
    c.partial_rotary_factor =
        optional_double(root, "partial_rotary_factor", "partial_rotary_factor");
    for (const char* key : {"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"})
        if ((c.layer_norm_eps = optional_float(root, key))) break;
    c.type_vocab_size = optional_count(root, "type_vocab_size", kMaxVocab).value_or(0);
    c.id2label = read_labels(root);
    if (const json* act = find(root, "hidden_activation"); act != nullptr && act->is_string())
        c.hidden_activation = act->get<std::string>();
    if (arch != nullptr && arch->finish_config != nullptr) arch->finish_config(root, c);
    return c;
}

}  // namespace

RefConfig parse_ref_config(const std::string& json_text) {
    json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded()) fail("", "not valid JSON");
    return parse_root(std::move(root));
}

RefConfig read_ref_config(const std::filesystem::path& config_json) {
    json root = json::parse(rebox::detail::read_side_file(config_json), nullptr, false);
    if (root.is_discarded()) throw_input_error(config_json.string(), "", "not valid JSON");
    return parse_root(std::move(root));
}

void check_ref_config_against_shapes(const RefConfig& config,
                                     const std::vector<std::vector<int64_t>>& shapes) {
    const uint64_t tensors = shapes.size();
    uint64_t largest = 0;
    for (const auto& shape : shapes)
        for (const int64_t dim : shape)
            if (dim > 0 && uint64_t(dim) > largest) largest = uint64_t(dim);
    constexpr uint64_t small = 4096;  // a partial checkpoint may hold fewer tensors than this
    struct Count {
        const char* key;
        uint64_t value;
        uint64_t bound;
        bool small_allowed;
    };
    const Count counts[] = {
        {"num_hidden_layers", config.num_hidden_layers, tensors, false},
        {"head_dim", config.head_dim, largest, true},
        {"vocab_size", config.vocab_size, largest, true},
        {"num_experts", config.num_experts, std::max(tensors, largest), true},
        {"num_experts_per_tok", config.num_experts_per_tok, std::max(tensors, largest), true},
    };
    for (const Count& c : counts) {
        if (c.value <= c.bound || (c.small_allowed && c.value <= small)) continue;
        throw_input_error("config.json", c.key,
                          std::to_string(c.value) + " does not fit the weights (" +
                              std::to_string(tensors) + " tensors, largest dimension " +
                              std::to_string(largest) + ")",
                          "at most " + std::to_string(c.bound) +
                              "; use the config.json that belongs to these weights");
    }
}

}  // namespace rebox::verify_ref
