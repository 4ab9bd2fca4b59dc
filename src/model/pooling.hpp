// Sentence-transformers pooling (modules.json + <path>/config.json) -> llama.cpp pooling type.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace rebox {

enum class PoolingType : uint32_t { NONE = 0, MEAN = 1, CLS = 2, LAST = 3, RANK = 4 };

// nullopt when the directory has no modules.json or no Pooling module; throws rebox::Error
// (input class) for malformed files or an unsupported pooling mode.
std::optional<PoolingType> read_pooling(const std::filesystem::path& model_dir);

}  // namespace rebox
