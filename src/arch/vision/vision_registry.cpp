// The list of vision tower records, and which one converts a config.json: the converter's
// get_model_architecture takes vision_config.architectures[0] when present, else the top-level
// architectures[0]; a checkpoint without vision_config has no vision tower to write.
#include <nlohmann/json.hpp>

#include "vision_architecture.hpp"

namespace rebox::arch {

const VisionArchitecture* find_vision_architecture(const nlohmann::json& config) {
    static const VisionArchitecture* const kVisionArchitectures[] = {
        &detail::gemma3_vision_architecture(),   &detail::qwen2vl_vision_architecture(),
        &detail::qwen25vl_vision_architecture(), &detail::qwen3vl_vision_architecture(),
        &detail::qwen35_vision_architecture(),   &detail::gemma4_vision_architecture(),
        &detail::pixtral_vision_architecture(),
    };
    if (!config.is_object()) return nullptr;
    const auto vision = config.find("vision_config");
    if (vision == config.end() || !vision->is_object()) return nullptr;
    const auto first_architecture = [](const nlohmann::json& object) -> std::string {
        const auto list = object.find("architectures");
        if (list == object.end() || !list->is_array() || list->empty() || !(*list)[0].is_string())
            return {};
        return (*list)[0].get<std::string>();
    };
    std::string name = first_architecture(*vision);
    if (name.empty()) name = first_architecture(config);
    for (const VisionArchitecture* arch : kVisionArchitectures)
        for (const std::string_view claimed : arch->hf_architectures)
            if (claimed == name) return arch;
    return nullptr;
}

}  // namespace rebox::arch
