// The model directory read once: config.json parsed and every safetensors file opened and
// validated, then shared read-only by the source readers, the plan, and (in convert) verify, so
// nothing reads or maps the same file twice. Verify still parses the quantization metadata itself
// from the file: that independence is its point.
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>

#include "format/safetensors.hpp"

namespace rebox {

class ModelDir {
  public:
    // Reads config.json (if present) and opens model.safetensors or the shards its index lists.
    // Throws rebox::Error (input class) naming the file when one is unreadable or malformed.
    static std::shared_ptr<const ModelDir> open(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return path_; }
    bool has_config() const { return config_ != nullptr; }
    // config.json's top-level object; throws the input error of a missing config.json when absent.
    const nlohmann::json& config() const;
    const SafetensorsModel& safetensors() const { return safetensors_; }
    ~ModelDir();  // out of line: config_'s json type is only declared here (json_fwd.hpp)

  private:
    ModelDir();
    std::filesystem::path path_;
    std::unique_ptr<const nlohmann::json> config_;
    SafetensorsModel safetensors_;
};

}  // namespace rebox
