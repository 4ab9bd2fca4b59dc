// config.json -> ModelConfig with the architecture's own rules: the architecture is picked (a
// claims_config hook, else model_type), its config_defaults filled in, its prepare_config hook
// run, the common fields read (model/model_config.hpp), its finish_config hook run, and the caps
// checked (model/config_bounds.hpp).
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>

#include "model/model_config.hpp"

namespace rebox {

// Throws rebox::Error (input class) naming config.json and the field for a missing or ill-typed
// field, or one the architecture's converter refuses. An unknown model_type is read (the plan
// refuses it).
ModelConfig read_model_config(const std::filesystem::path& config_json);
// The same from config.json's parsed top-level object (ModelDir::config()).
ModelConfig parse_model_config(nlohmann::json root);

}  // namespace rebox
