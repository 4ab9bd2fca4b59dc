// GGUF writer, split in two so output can stream: GgufLayout holds the KVs and tensor infos,
// computes canonical offsets (offset[i] = offset[i-1] + PAD(nbytes[i-1], alignment), 32 by default)
// and serializes the metadata block (header, KVs, tensor infos, zero padding to the data section).
// Tensor bytes are then written at data_offset() + tensor.offset by the caller (write_gguf() does
// it for whole files).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "format/gguf_file.hpp"
#include "rebox/gguf_value.hpp"

namespace rebox {

inline uint64_t gguf_pad(uint64_t x, uint64_t n) { return (x + n - 1) / n * n; }

class GgufLayout {
  public:
    // Default: alignment 32 and no general.alignment key. With an explicit alignment (a power of
    // two; rebox meta keeps a file's own), tensors are padded to it and general.alignment may be
    // added, but only as a UINT32 equal to it.
    GgufLayout() = default;
    explicit GgufLayout(uint32_t alignment);
    // Throws rebox::Error on an empty or duplicate key.
    void add_kv(std::string key, GgufValue value);
    void set_kv(std::string key, GgufValue value);  // adds or replaces in place
    // Throws on a name > 63 bytes, duplicate name, > 4 dims, a dim < 1, or ne[0] not a multiple of
    // the block.
    void add_tensor(std::string name, std::vector<int64_t> ne, GgmlType type);

    const std::vector<GgufKV>& kvs() const { return kvs_; }
    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    uint64_t metadata_size() const;  // bytes before the data section padding
    uint64_t data_offset() const;    // PAD(metadata_size, alignment)
    uint32_t alignment() const { return alignment_; }
    uint64_t file_size() const;  // data_offset + sum of PAD(nbytes, alignment)
    // Header + KVs + tensor infos + zero padding: exactly data_offset() bytes.
    std::vector<uint8_t> serialize_metadata() const;

  private:
    std::vector<GgufKV> kvs_;
    std::vector<GgufTensorInfo> tensors_;
    uint64_t data_size_ = 0;
    uint32_t alignment_ = kGgufDefaultAlignment;
    bool alignment_key_allowed_ = false;
    void check_alignment_kv(const std::string& key, const GgufValue& value) const;
};

// Writes a whole GGUF atomically: metadata, then for each tensor fill(i, out) with out sized
// nbytes, then zero padding. Memory use is one tensor at a time.
void write_gguf(const std::filesystem::path& target, const GgufLayout& layout,
                const std::function<void(size_t, std::span<uint8_t>)>& fill, bool force);

}  // namespace rebox
