// Reading and writing the fixtures' JSON side files (config.json, tokenizer.json, ...), key order
// kept (nlohmann::ordered_json), with errors that name the file.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace mkfixture {

// The parsed file; throws std::runtime_error "PATH: cannot read" or "PATH: not JSON (...)".
nlohmann::ordered_json read_json_file(const std::filesystem::path& path);

// Writes value.dump(indent) and a newline, replacing the file; throws "PATH: cannot write".
void write_json_file(const std::filesystem::path& path, const nlohmann::ordered_json& value,
                     int indent = 1);

}  // namespace mkfixture
