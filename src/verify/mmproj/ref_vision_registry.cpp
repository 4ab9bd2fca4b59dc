// Which vision family verify expects for a config.json: the converter's get_model_architecture
// takes vision_config.architectures[0] when present, else the top-level architectures[0]; no
// vision_config, no tower.
#include <nlohmann/json.hpp>

#include "ref_vision.hpp"

namespace rebox::verify_ref {

const RefVisionFamily* find_ref_vision_family(const nlohmann::json& config) {
    if (!config.is_object() || !config.contains("vision_config") ||
        !config["vision_config"].is_object())
        return nullptr;
    const auto first = [](const nlohmann::json& object) {
        const auto it = object.find("architectures");
        return it != object.end() && it->is_array() && !it->empty() && (*it)[0].is_string()
                   ? (*it)[0].get<std::string>()
                   : std::string();
    };
    std::string name = first(config["vision_config"]);
    if (name.empty()) name = first(config);
    if (name == "Gemma3ForConditionalGeneration") return &ref_gemma3_vision();
    if (name == "Gemma4ForConditionalGeneration") return &ref_gemma4_vision();
    if (name == "Mistral3ForConditionalGeneration") return &ref_pixtral_vision();
    if (name == "Qwen2VLForConditionalGeneration") return &ref_qwen2vl_vision();
    if (name == "Qwen2_5_VLForConditionalGeneration") return &ref_qwen25vl_vision();
    if (name == "Qwen3VLForConditionalGeneration" || name == "Qwen3VLMoeForConditionalGeneration")
        return &ref_qwen3vl_vision();
    if (name == "Qwen3_5ForConditionalGeneration" || name == "Qwen3_5MoeForConditionalGeneration")
        return &ref_qwen35_vision();
    return nullptr;
}

}  // namespace rebox::verify_ref
