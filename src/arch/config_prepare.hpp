// Per-architecture rewrites of config.json before read_model_config reads it: field names a family
// spells differently (nomic_bert's GPT-2 names, in llama.cpp's converter's search order), the
// converter's own rewrites (nomic_bert's context length) and its asserts, as one-line input errors.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

namespace rebox::arch {

// Rewrites `root` for config.json model_type `model_type`; nothing for the other types. Throws an
// input rebox::Error naming the config.json field the converter would refuse.
void prepare_config(std::string_view model_type, nlohmann::json& root);

}  // namespace rebox::arch
