// Strict safetensors reader: the header is validated completely before any tensor is touched
// (length inside the file and capped, JSON well-formed, known dtypes, shape x dtype size equal to
// the data_offsets span, spans inside the data area and non-overlapping, string metadata).
// Sharded checkpoints are read through model.safetensors.index.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/mapped_file.hpp"
#include "format/name_index.hpp"

namespace rebox {

enum class StDtype {
    BOOL,
    U8,
    I8,
    U16,
    I16,
    F16,
    BF16,
    U32,
    I32,
    F32,
    U64,
    I64,
    F64,
    F8_E4M3,
    F8_E5M2
};

std::optional<StDtype> st_dtype_from_name(std::string_view name);
std::string_view st_dtype_name(StDtype dtype);
size_t st_dtype_size(StDtype dtype);

inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100ull * 1024 * 1024;  // as the HF crate

struct StTensorInfo {
    std::string name;
    StDtype dtype;
    std::vector<int64_t> shape;  // as stored (row-major, outermost first)
    uint64_t begin = 0;          // data_offsets, relative to the data area
    uint64_t end = 0;
    uint64_t element_count() const;
};

class SafetensorsFile {
  public:
    // Maps and validates; throws rebox::Error (input class) with "FILE: FIELD: what".
    static std::shared_ptr<SafetensorsFile> open(const std::filesystem::path& path);
    // Validates a header+data image held in memory (used by tests and fuzzers); `name` is used in
    // messages.
    static std::shared_ptr<SafetensorsFile> parse(std::span<const uint8_t> bytes, std::string name);

    const std::filesystem::path& path() const { return path_; }
    const std::string& display_name() const { return name_; }
    uint64_t header_size() const { return header_size_; }
    const std::vector<StTensorInfo>& tensors() const { return tensors_; }  // in header order
    // The tensor named `name`, or nullptr: one hash look-up (the index is built once, at load).
    const StTensorInfo* find(std::string_view name) const;
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    // The tensor's bytes (zero-copy into the mapping).
    std::span<const uint8_t> data(const StTensorInfo& tensor) const;
    const MappedFile* mapping() const { return mapped_.get(); }

    // The index holds views of tensors_' names: a copy would point into the original.
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  private:
    SafetensorsFile() = default;
    void load(std::span<const uint8_t> bytes);

    std::filesystem::path path_;
    std::string name_;
    std::unique_ptr<MappedFile> mapped_;
    std::span<const uint8_t> bytes_;
    uint64_t header_size_ = 0;
    std::vector<StTensorInfo> tensors_;
    NameIndex index_by_name_;  // name -> position in tensors_
    std::map<std::string, std::string> metadata_;
};

// A checkpoint directory: model.safetensors, or the shards listed by model.safetensors.index.json
// (weight_map entries must name existing shards and each tensor must be in the shard it names).
// A tensor of a checkpoint directory and the file that holds it.
struct StLocated {
    const SafetensorsFile* file = nullptr;
    const StTensorInfo* info = nullptr;
};

class SafetensorsModel {
  public:
    static SafetensorsModel open(const std::filesystem::path& model_dir);
    const std::vector<std::shared_ptr<SafetensorsFile>>& files() const { return files_; }
    // The tensor named `name` in any file, or nullptr: one hash look-up in an index built once
    // by open() (names are unique across shards: open() refuses a tensor in two shards). The
    // pointer stays valid while this model lives.
    const StLocated* find(std::string_view name) const;

  private:
    std::vector<std::shared_ptr<SafetensorsFile>> files_;
    // Every tensor of files_, in file order (the files are shared, so copies stay valid); one
    // file is looked up through its own index, shards through index_by_name_ (into located_).
    std::vector<StLocated> located_;
    NameIndex index_by_name_;
};

}  // namespace rebox
