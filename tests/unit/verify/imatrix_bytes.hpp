// Hand-made importance-matrix files for the tests of `verify --imatrix`: the legacy imatrix.dat
// layout and llama.cpp's GGUF imatrix, byte by byte from the formats' definitions (GGUF v3: header,
// KVs, tensor infos, data aligned to 32), so the bytes do not come from a reader or writer under
// test. Header-only, in its own namespace.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace rebox::test_imatrix {

struct LegacyEntry {
    std::string name;
    int32_t ncall = 0;
    std::vector<float> values;
};

class ByteSink {
  public:
    template <typename T>
    ByteSink& put(T value) {
        const size_t at = bytes.size();
        bytes.resize(at + sizeof(T));
        std::memcpy(bytes.data() + at, &value, sizeof(T));
        return *this;
    }
    ByteSink& put_bytes(const std::string& text) {
        bytes.insert(bytes.end(), text.begin(), text.end());
        return *this;
    }
    ByteSink& gguf_string(const std::string& text) {
        put<uint64_t>(text.size());
        return put_bytes(text);
    }
    std::vector<uint8_t> bytes;
};

// int32 entry count; per entry int32 name length, name, int32 ncall, int32 value count, values;
// then the optional int32 chunk count and int32 dataset length + dataset.
inline std::vector<uint8_t> legacy_imatrix(const std::vector<LegacyEntry>& entries,
                                           int32_t chunks = 10,
                                           const std::string& dataset = "wiki.train") {
    ByteSink out;
    out.put<int32_t>(static_cast<int32_t>(entries.size()));
    for (const LegacyEntry& e : entries) {
        out.put<int32_t>(static_cast<int32_t>(e.name.size())).put_bytes(e.name);
        out.put<int32_t>(e.ncall).put<int32_t>(static_cast<int32_t>(e.values.size()));
        for (const float v : e.values) out.put<float>(v);
    }
    out.put<int32_t>(chunks).put<int32_t>(static_cast<int32_t>(dataset.size())).put_bytes(dataset);
    return out.bytes;
}

// One F32 tensor of a GGUF imatrix (type 0 = F32 unless overridden).
struct GgufImatrixTensor {
    std::string name;  // "W.in_sum2" or "W.counts"
    std::vector<int64_t> ne;
    std::vector<float> values;
    uint32_t type = 0;
};

struct GgufImatrixKeys {
    bool datasets = true, chunk_count = true, chunk_size = true;
    uint32_t chunk_count_type = 4;  // UINT32; 5 (INT32) for a hostile file
};

inline std::vector<uint8_t> gguf_imatrix(const std::vector<GgufImatrixTensor>& tensors,
                                         const GgufImatrixKeys& keys = {}) {
    ByteSink out;
    out.put_bytes("GGUF").put<uint32_t>(3);
    out.put<uint64_t>(tensors.size());
    out.put<uint64_t>(1 + keys.datasets + keys.chunk_count + keys.chunk_size);
    out.gguf_string("general.type").put<uint32_t>(8).gguf_string("imatrix");
    if (keys.datasets)  // ARRAY (9) of STRING (8), one element
        out.gguf_string("imatrix.datasets")
            .put<uint32_t>(9)
            .put<uint32_t>(8)
            .put<uint64_t>(1)
            .gguf_string("wiki.train");
    if (keys.chunk_count)
        out.gguf_string("imatrix.chunk_count")
            .put<uint32_t>(keys.chunk_count_type)
            .put<uint32_t>(7);
    if (keys.chunk_size) out.gguf_string("imatrix.chunk_size").put<uint32_t>(4).put<uint32_t>(512);
    uint64_t offset = 0;
    for (const GgufImatrixTensor& t : tensors) {
        out.gguf_string(t.name).put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
        for (const int64_t n : t.ne) out.put<int64_t>(n);
        out.put<uint32_t>(t.type).put<uint64_t>(offset);
        offset += (t.values.size() * 4 + 31) / 32 * 32;
    }
    while (out.bytes.size() % 32 != 0) out.put<uint8_t>(0);
    for (const GgufImatrixTensor& t : tensors) {
        for (const float v : t.values) out.put<float>(v);
        while (out.bytes.size() % 32 != 0) out.put<uint8_t>(0);
    }
    return out.bytes;
}

}  // namespace rebox::test_imatrix
