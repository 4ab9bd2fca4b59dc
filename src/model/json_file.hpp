// Internal: read a small JSON file (config.json, modules.json, tokenizer_config.json) with
// nlohmann::json, turning unreadable or malformed files into one-line input-class rebox::Error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace rebox::detail {

// Size caps for side files, checked before anything is read: far above real files (Qwen3's
// tokenizer.json is 11 MB, large-vocabulary ones tens of MB; config files a few KB), far below what
// would exhaust memory once parsed into a DOM.
inline constexpr uint64_t kMaxSideFileBytes = 64ull << 20;  // modules.json, tokenizer_config, ...
// config.json: real ones are a few KB (the largest, with per-module quantization overrides, tens of
// KB); parsed into a DOM a JSON file takes ~36 bytes per byte, so 1 MiB keeps a hostile one (a
// 1 MiB rope_scaling.long_factor list) under 64 MB of memory.
inline constexpr uint64_t kMaxConfigBytes = 1ull << 20;
// The cap for a side file by its name: kMaxConfigBytes for config.json, else kMaxSideFileBytes.
uint64_t side_file_cap(const std::filesystem::path& path);
inline constexpr uint64_t kMaxTokenizerBytes = 512ull << 20;  // tokenizer.json

// Throws rebox::Error (input) "FILE: is N bytes, over the M MiB limit ..." when the file is larger
// than max_bytes; unreadable files are left to the caller's open.
void check_file_size(const std::filesystem::path& path, uint64_t max_bytes);

// The whole file (at most side_file_cap()); throws rebox::Error (input) naming the file.
std::string read_side_file(const std::filesystem::path& path);

// The parsed document; throws rebox::Error (input) naming the file when unreadable or not JSON.
nlohmann::json read_json(const std::filesystem::path& path);

// As read_json, and the top level must be an object.
nlohmann::json read_json_object(const std::filesystem::path& path);

}  // namespace rebox::detail
