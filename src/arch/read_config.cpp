// config.json read through the registry: the architecture's defaults and hooks around the common
// fields, then the caps.
#include "arch/read_config.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "arch/architecture.hpp"
#include "model/config_bounds.hpp"
#include "model/json_file.hpp"

namespace rebox {

ModelConfig read_model_config(const std::filesystem::path& config_json) {
    return parse_model_config(detail::read_json_object(config_json));
}

ModelConfig parse_model_config(nlohmann::json root) {
    merge_text_config(root);
    ModelConfig config;
    read_config_identity(root, config);
    const arch::Architecture* architecture = arch::claiming_architecture(root);
    if (architecture != nullptr)
        config.model_type = std::string(architecture->gguf_arch);
    else
        architecture = arch::find_architecture(config.model_type);
    if (architecture != nullptr) {
        for (const arch::ConfigDefault& d : architecture->config_defaults) {
            const std::string field(d.field);
            if (!root.contains(field) || root[field].is_null())
                root[field] = nlohmann::json::parse(d.json_value);
        }
        if (architecture->prepare_config) architecture->prepare_config(root);
    }
    // TextModel writes feed_forward_length only when config.json has intermediate_size; an
    // architecture that lists it so (ArchKv::feed_forward_length_given: Qwen3.5 MoE, whose layers
    // are all MoE) may have none, and reads a stand-in 1 no tensor of it uses.
    config.intermediate_size_given =
        root.contains("intermediate_size") && !root["intermediate_size"].is_null();
    if (!config.intermediate_size_given && architecture != nullptr &&
        std::find(architecture->kvs.begin(), architecture->kvs.end(),
                  arch::ArchKv::feed_forward_length_given) != architecture->kvs.end())
        root["intermediate_size"] = 1;
    read_config_fields(root, config);
    if (architecture != nullptr && architecture->finish_config)
        architecture->finish_config(root, config);
    check_config_caps(config);
    return config;
}

}  // namespace rebox
