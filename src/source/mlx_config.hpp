// The "quantization" block of an MLX (mlx-lm) config.json: global group_size/bits/mode plus
// per-module overrides keyed by module path ({"group_size","bits"} or false). Alias
// "quantization_config"; for VLMs either may sit in "text_config". Values are checked for type
// only here; the reader applies the value rules (bits, group, mode) per tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace rebox::mlx {

// One quantization setting (the global one, or a module's override).
struct QuantSetting {
    bool quantized = true;  // false: the config says the module is not quantized
    int bits = 0;           // 0: missing
    int64_t group = 0;      // 0: missing
    std::string mode;       // "" when absent (means affine)
    std::string problem;    // non-empty: ill-typed field (the module cannot be read)
};

struct QuantConfig {
    std::string
        field;  // where it was found, e.g. "quantization" or "text_config.quantization_config"
    QuantSetting global;
    std::map<std::string, QuantSetting> overrides;  // module path -> setting
    std::string quant_method;  // "quant_method" if present (GPTQ/AWQ configs have one; MLX none)
    bool quantize_activations = false;

    // The setting of module `path` (its override, else the global one).
    const QuantSetting& setting_for(const std::string& path) const;
};

// The quantization block of a parsed config.json object, or nullopt when there is none.
std::optional<QuantConfig> find_quant_config(const nlohmann::json& config);

// True when a quantization block with group_size or bits exists (the dispatcher's MLX signal).
bool has_mlx_quant_config(const nlohmann::json& config);

}  // namespace rebox::mlx
