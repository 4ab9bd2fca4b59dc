// verify's own reading of the encoder configs whose config.json does not use the usual Hugging
// Face names (nomic_bert: GPT-2 names and llama.cpp's converter's context rewrite), turned into the
// names read_ref_config reads. Written apart from src/arch/ and src/model/ (no shared code).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rebox::verify_ref {

// Adds the usual names a model_type's config.json lacks; nothing for other model types.
void add_encoder_config_names(const std::string& model_type, nlohmann::json& root);

}  // namespace rebox::verify_ref
