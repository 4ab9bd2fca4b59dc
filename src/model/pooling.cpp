// modules.json + <Pooling path>/config.json -> llama.cpp pooling type, as convert_hf_to_gguf's
// TextModel._try_set_pooling_type decides it (docs/gguf.md §4.3).
#include "model/pooling.hpp"

#include <nlohmann/json.hpp>
#include <string>

#include "json_file.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

using nlohmann::json;

// The "path" of the first module whose type ends with "Pooling"; nullopt when there is none.
std::optional<std::filesystem::path> pooling_module_path(
    const std::filesystem::path& modules_file) {
    const std::string file = modules_file.string();
    const json modules = detail::read_json(modules_file);
    if (!modules.is_array()) throw_input_error(file, "", "expected a JSON array of modules");
    for (size_t i = 0; i < modules.size(); ++i) {
        const json& module = modules[i];
        const std::string where = "modules[" + std::to_string(i) + "]";
        if (!module.is_object()) throw_input_error(file, where, "expected an object");
        const auto type = module.find("type");
        if (type == module.end() || !type->is_string())
            throw_input_error(file, where + ".type", "expected a string");
        if (!type->get_ref<const std::string&>().ends_with("Pooling")) continue;
        const auto path = module.find("path");
        if (path == module.end() || !path->is_string())
            throw_input_error(file, where + ".path", "expected a string");
        const std::filesystem::path relative(path->get<std::string>());
        // The module must live inside the model directory.
        bool escapes = relative.is_absolute() || relative.empty();
        for (const auto& part : relative) escapes = escapes || part == "..";
        if (escapes)
            throw_input_error(
                file, where + ".path",
                "'" + relative.string() + "' is not a folder inside the model directory");
        return relative;
    }
    return std::nullopt;
}

bool mode_flag(const json& config, const std::string& file, const char* field) {
    const auto it = config.find(field);
    if (it == config.end() || it->is_null()) return false;
    if (!it->is_boolean()) throw_input_error(file, field, "expected a boolean");
    return it->get<bool>();
}

}  // namespace

std::optional<PoolingType> read_pooling(const std::filesystem::path& model_dir) {
    const std::filesystem::path modules_file = model_dir / "modules.json";
    if (!std::filesystem::is_regular_file(modules_file)) return std::nullopt;
    const auto module_path = pooling_module_path(modules_file);
    if (!module_path) return std::nullopt;

    const std::filesystem::path config_file = model_dir / *module_path / "config.json";
    const std::string file = config_file.string();
    const json config = detail::read_json_object(config_file);
    // Same precedence as the converter: mean, cls, lasttoken, then the "pooling_mode" string.
    if (mode_flag(config, file, "pooling_mode_mean_tokens")) return PoolingType::MEAN;
    if (mode_flag(config, file, "pooling_mode_cls_token")) return PoolingType::CLS;
    if (mode_flag(config, file, "pooling_mode_lasttoken")) return PoolingType::LAST;
    if (const auto mode = config.find("pooling_mode"); mode != config.end() && mode->is_string()) {
        const std::string& name = mode->get_ref<const std::string&>();
        if (name == "mean") return PoolingType::MEAN;
        if (name == "cls") return PoolingType::CLS;
        if (name == "lasttoken") return PoolingType::LAST;
    }
    throw_input_error(
        file, "pooling_mode", "no supported pooling mode set",
        "pooling_mode_mean_tokens, pooling_mode_cls_token or pooling_mode_lasttoken true, "
        "or pooling_mode mean/cls/lasttoken");
}

}  // namespace rebox
