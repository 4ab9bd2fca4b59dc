// A tiny safetensors writer of its own (independent of rebox's reader): header JSON built by hand
// in the compact form the reference safetensors library writes, padded with spaces to 8 bytes,
// then each tensor's bytes streamed in order from a callback.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace mkfixture {

struct StTensor {
    std::string name;
    std::string dtype;  // "U8", "F16", "F32"
    std::vector<int64_t> shape;
    uint64_t byte_count = 0;
    std::function<void(std::ostream&)> write;  // must write exactly byte_count bytes
};

// JSON string escaping for header keys and metadata values.
std::string json_escape(const std::string& text);

// The header JSON (without the 8-byte length), padded with spaces to a multiple of 8.
std::string safetensors_header(const std::vector<StTensor>& tensors,
                               const std::vector<std::pair<std::string, std::string>>& metadata);

// Writes the whole file; throws std::runtime_error if a callback writes the wrong byte count.
void write_safetensors(const std::filesystem::path& path, const std::vector<StTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace mkfixture
