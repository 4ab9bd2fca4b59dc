// Strict GGUF v2/v3 reader: every rule of llama.cpp's gguf.cpp (docs/gguf.md §1.6) is checked
// before use; tensor data stays memory-mapped. This is the reader `verify` trusts: it has no writer
// code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/mapped_file.hpp"
#include "rebox/rebox.hpp"

namespace rebox {

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint32_t kGgufVersion = 3;
inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr uint64_t kGgufMaxStringLength = 1ull << 30;   // GGUF_MAX_STRING_LENGTH
inline constexpr uint64_t kGgufMaxArrayElements = 1ull << 30;  // GGUF_MAX_ARRAY_ELEMENTS
// Memory for all decoded KV strings and array elements (rebox's own cap; Qwen3's vocabulary
// counts 20.1 MiB against it).
inline constexpr uint64_t kGgufMaxMetadataMemory = 256ull << 20;
inline constexpr size_t kGgmlMaxNameBytes = 63;  // GGML_MAX_NAME - 1
inline constexpr uint32_t kGgmlMaxDims = 4;

class GgufFile {
  public:
    // Maps and validates; throws rebox::Error (input class) "FILE: FIELD: what (expected ...)".
    static std::unique_ptr<GgufFile> open(const std::filesystem::path& path);
    // Validates an in-memory image (tests, fuzzers); `name` is used in messages.
    static std::unique_ptr<GgufFile> parse(std::span<const uint8_t> bytes, std::string name);

    const std::string& display_name() const { return name_; }
    uint32_t version() const { return version_; }
    uint32_t alignment() const { return alignment_; }
    uint64_t data_offset() const { return data_offset_; }  // absolute start of the data section
    uint64_t file_size() const { return bytes_.size(); }
    uint64_t meta_end() const { return meta_end_; }  // first byte after the last tensor info

    const std::vector<GgufKV>& kvs() const { return kvs_; }
    const GgufValue* find(std::string_view key) const;
    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    const GgufTensorInfo* find_tensor(std::string_view name) const;
    std::span<const uint8_t> tensor_data(const GgufTensorInfo& tensor) const;
    std::span<const uint8_t> bytes() const { return bytes_; }
    const MappedFile* mapping() const { return mapped_.get(); }

  private:
    GgufFile() = default;
    void load();

    std::string name_;
    std::unique_ptr<MappedFile> mapped_;
    std::span<const uint8_t> bytes_;
    uint32_t version_ = 0;
    uint32_t alignment_ = kGgufDefaultAlignment;
    uint64_t meta_end_ = 0;
    uint64_t data_offset_ = 0;
    std::vector<GgufKV> kvs_;
    std::vector<GgufTensorInfo> tensors_;
};

}  // namespace rebox
