// GGUF metadata values from command-line text: type names ("UINT32", "ARRAY[STRING]"), scalars
// parsed by their declared type, and arrays read from a JSON file. Used by `rebox meta --set`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "rebox/gguf_value.hpp"

namespace rebox {

// A parsed type spec: a scalar type, or ARRAY with its element type.
struct GgufTypeSpec {
    GgufType type = GgufType::STRING;
    GgufType elem_type = GgufType::STRING;  // for ARRAY only
};

// "UINT8".."FLOAT64", "BOOL", "STRING", or "ARRAY[T]" with T one of those; nullopt otherwise.
std::optional<GgufTypeSpec> parse_gguf_type_spec(std::string_view text);
// "UINT32" or "ARRAY[STRING]".
std::string gguf_type_spec_name(const GgufValue& value);

// Parses text as a scalar of `type` (integers in range, FLOAT32 rounded to the nearest float,
// BOOL true/false, STRING as is); throws rebox::Error naming `key` on junk or out-of-range values.
GgufValue parse_gguf_scalar(const std::string& key, GgufType type, const std::string& text);

// Reads a JSON array from `json_file` as an array of `elem_type` (integers in range, numbers for
// floats, true/false, strings); throws rebox::Error naming the file, key and element index.
GgufValue read_gguf_array_json(const std::string& key, GgufType elem_type,
                               const std::filesystem::path& json_file);

}  // namespace rebox
