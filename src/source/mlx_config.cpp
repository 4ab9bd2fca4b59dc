// Parsing of the MLX config.json quantization block (docs/formats.md §2 "config.json").
#include "mlx_config.hpp"

#include <nlohmann/json.hpp>

namespace rebox::mlx {
namespace {

constexpr const char* kKeys[] = {"quantization", "quantization_config"};

// Reads an integer field; returns false (and leaves *out) when it is absent, sets problem if
// present but not a non-negative integer. A value that passes is at most 2^20, so it fits any Int.
template <typename Int>
void read_int(const nlohmann::json& object, const char* key, Int* out, std::string* problem) {
    const auto it = object.find(key);
    if (it == object.end()) return;
    if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<uint64_t>() > 1u << 20) ||
        (!it->is_number_unsigned() && it->get<int64_t>() < 0)) {
        if (problem->empty())
            *problem = "'" + std::string(key) + "' is not a small non-negative integer";
        return;
    }
    *out = static_cast<Int>(it->get<int64_t>());
}

QuantSetting parse_setting(const nlohmann::json& value) {
    QuantSetting setting;
    if (value.is_boolean()) {
        setting.quantized = value.get<bool>();
        return setting;
    }
    if (!value.is_object()) {
        setting.problem = "is neither an object nor a boolean";
        return setting;
    }
    read_int(value, "bits", &setting.bits, &setting.problem);
    read_int(value, "group_size", &setting.group, &setting.problem);
    if (const auto mode = value.find("mode"); mode != value.end()) {
        if (mode->is_string())
            setting.mode = mode->get<std::string>();
        else if (setting.problem.empty())
            setting.problem = "'mode' is not a string";
    }
    return setting;
}

const nlohmann::json* quant_block(const nlohmann::json& config, std::string* field) {
    for (const char* prefix : {"", "text_config"}) {
        const nlohmann::json* scope = &config;
        if (*prefix) {
            const auto it = config.find(prefix);
            if (it == config.end() || !it->is_object()) continue;
            scope = &*it;
        }
        for (const char* key : kKeys) {
            const auto it = scope->find(key);
            if (it != scope->end() && it->is_object()) {
                *field = *prefix ? std::string(prefix) + "." + key : std::string(key);
                return &*it;
            }
        }
    }
    return nullptr;
}

}  // namespace

const QuantSetting& QuantConfig::setting_for(const std::string& path) const {
    const auto it = overrides.find(path);
    return it != overrides.end() ? it->second : global;
}

std::optional<QuantConfig> find_quant_config(const nlohmann::json& config) {
    if (!config.is_object()) return std::nullopt;
    QuantConfig result;
    const nlohmann::json* block = quant_block(config, &result.field);
    if (!block) return std::nullopt;
    static const char* const kGlobalKeys[] = {"group_size", "bits", "mode", "quant_method",
                                              "quantize_activations"};
    nlohmann::json global = nlohmann::json::object();
    for (const auto& [key, value] : block->items()) {
        bool is_global = false;
        for (const char* g : kGlobalKeys) is_global |= key == g;
        if (is_global)
            global[key] = value;
        else
            result.overrides.emplace(key, parse_setting(value));
    }
    result.global = parse_setting(global);
    if (const auto it = block->find("quant_method"); it != block->end())
        result.quant_method = it->is_string() ? it->get<std::string>() : it->dump();
    if (const auto it = block->find("quantize_activations"); it != block->end())
        result.quantize_activations = it->is_boolean() && it->get<bool>();
    return result;
}

bool has_mlx_quant_config(const nlohmann::json& config) {
    std::string field;
    const nlohmann::json* block = config.is_object() ? quant_block(config, &field) : nullptr;
    return block && (block->contains("group_size") || block->contains("bits"));
}

}  // namespace rebox::mlx
