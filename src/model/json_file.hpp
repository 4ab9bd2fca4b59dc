// Internal: read a small JSON file (config.json, modules.json, tokenizer_config.json) with
// nlohmann::json, turning unreadable or malformed files into one-line input-class rebox::Error.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace rebox::detail {

// The parsed document; throws rebox::Error (input) naming the file when unreadable or not JSON.
nlohmann::json read_json(const std::filesystem::path& path);

// As read_json, and the top level must be an object.
nlohmann::json read_json_object(const std::filesystem::path& path);

}  // namespace rebox::detail
