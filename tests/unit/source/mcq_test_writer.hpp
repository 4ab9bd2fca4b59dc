// Test-local writer of mcq-v1 model directories: a minimal safetensors encoder (8-byte LE header
// length, JSON header with __metadata__ and data_offsets, data) written from the format's wording,
// independent of rebox's reader, plus helpers that add quantized triples and plain tensors and let
// a test break any single rule (edit `mcq`, a part's dtype/shape/bytes) before writing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "encode/bit_packer.hpp"
#include "test_files.hpp"

namespace rebox::test {

struct StTensor {
    std::string name;
    std::string dtype;  // "U8", "F16", "F32", ...
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
};

inline void write_safetensors(const std::filesystem::path& path,
                              const std::vector<StTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    // ordered_json's operator[] finds a key by a linear search: appended directly, a header of
    // thousands of tensors (a 1024-expert layer) is written in linear time, not quadratic. A name
    // given twice (a defect a test writes on purpose) still replaces its first entry.
    auto& entries = static_cast<std::vector<std::pair<const std::string, nlohmann::ordered_json>>&>(
        header.get_ref<nlohmann::ordered_json::object_t&>());
    std::unordered_set<std::string> seen;
    uint64_t offset = 0;
    for (const StTensor& t : tensors) {
        nlohmann::ordered_json entry = {{"dtype", t.dtype},
                                        {"shape", t.shape},
                                        {"data_offsets", {offset, offset + t.data.size()}}};
        if (seen.insert(t.name).second && t.name != "__metadata__")
            entries.emplace_back(t.name, std::move(entry));
        else
            header[t.name] = std::move(entry);
        offset += t.data.size();
    }
    std::string text = header.dump();
    while (text.size() % 8) text += ' ';
    std::ofstream out(path, std::ios::binary);
    const uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>(n >> (8 * i)));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const StTensor& t : tensors)
        out.write(reinterpret_cast<const char*>(t.data.data()),
                  static_cast<std::streamsize>(t.data.size()));
}

// The tensors of a safetensors file under construction, found or dropped by name.
struct StTensorList {
    std::vector<StTensor> tensors;

    StTensor& part(const std::string& name) {
        for (StTensor& t : tensors)
            if (t.name == name) return t;
        throw std::runtime_error("test: no tensor " + name);
    }
    void remove(const std::string& name) {
        std::erase_if(tensors, [&](const StTensor& t) { return t.name == name; });
    }
};

// One safetensors file of an mcq-v1 checkpoint under construction.
class McqFile : public StTensorList {
  public:
    nlohmann::json mcq = {{"version", 1}, {"tensors", nlohmann::json::object()}};
    bool write_mcq = true;

    // A quantized weight [rows, cols]: random codes packed lsb0, fp16 scales/mins (finite values).
    void quant(const std::string& name, int bits, int64_t group, int64_t rows, int64_t cols,
               uint32_t seed = 1) {
        std::mt19937 rng(seed);
        const int64_t n = rows * cols;
        std::vector<uint8_t> codes(static_cast<size_t>(n));
        for (auto& c : codes) c = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
        const int64_t groups = n / group;
        std::vector<uint8_t> scales, mins;
        for (int64_t g = 0; g < groups; ++g) {
            const uint16_t s = static_cast<uint16_t>(0x2000 + rng() % 0x1000);  // small positive
            const uint16_t m = static_cast<uint16_t>(0xA000 + rng() % 0x1000);  // small negative
            scales.push_back(static_cast<uint8_t>(s));
            scales.push_back(static_cast<uint8_t>(s >> 8));
            mins.push_back(static_cast<uint8_t>(m));
            mins.push_back(static_cast<uint8_t>(m >> 8));
        }
        std::vector<uint8_t> stream = pack_lsb0_bitwise(codes, bits);
        const int64_t stream_size = static_cast<int64_t>(stream.size());
        tensors.push_back({name + ".qcodes", "U8", {stream_size}, std::move(stream)});
        tensors.push_back({name + ".scales", "F16", {groups}, std::move(scales)});
        tensors.push_back({name + ".mins", "F16", {groups}, std::move(mins)});
        mcq["tensors"][name] = {
            {"bits", bits}, {"group", group}, {"layout", "lsb0"}, {"shape", {rows, cols}}};
    }

    // A plain tensor of `dtype` with element size `width` (bytes are a simple ramp).
    void plain(const std::string& name, const std::string& dtype, std::vector<int64_t> shape,
               size_t width) {
        size_t count = 1;
        for (int64_t d : shape) count *= static_cast<size_t>(d);
        std::vector<uint8_t> data(count * width);
        for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
        if (dtype == "F32")  // keep values finite: 1.0f pattern
            for (size_t i = 0; i < count; ++i) {
                data[4 * i] = 0, data[4 * i + 1] = 0, data[4 * i + 2] = 0x80,
                         data[4 * i + 3] = 0x3F;
            }
        tensors.push_back({name, dtype, std::move(shape), std::move(data)});
    }

    void write(const std::filesystem::path& path) const {
        std::map<std::string, std::string> metadata;
        if (write_mcq) metadata["mcq"] = mcq.dump();
        write_safetensors(path, tensors, metadata);
    }
};

}  // namespace rebox::test
