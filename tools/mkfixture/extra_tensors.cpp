// Appends --extra-tensor tensors to a fixture's model.safetensors (extra_tensors.hpp).
#include "extra_tensors.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "safetensors_writer.hpp"

namespace mkfixture {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kValues = 16;

struct Spec {
    std::string name, dtype;
};

Spec parse_spec(const std::string& spec) {
    const size_t colon = spec.rfind(':');
    if (colon == std::string::npos || colon == 0)
        throw std::runtime_error("--extra-tensor " + spec + ": expected NAME:I64 or NAME:F32");
    Spec out{spec.substr(0, colon), spec.substr(colon + 1)};
    if (out.dtype != "I64" && out.dtype != "F32")
        throw std::runtime_error("--extra-tensor " + spec + ": DTYPE must be I64 or F32");
    return out;
}

// 0..15 as little-endian int64 or float32.
std::string values(const std::string& dtype) {
    std::string bytes;
    for (int64_t i = 0; i < kValues; ++i) {
        if (dtype == "I64") {
            for (int b = 0; b < 8; ++b) bytes.push_back(static_cast<char>(uint64_t(i) >> (8 * b)));
        } else {
            const float value = static_cast<float>(i);
            uint32_t bits = 0;
            std::memcpy(&bits, &value, 4);
            for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<char>(bits >> (8 * b)));
        }
    }
    return bytes;
}

}  // namespace

void check_extra_tensor_specs(const std::vector<std::string>& specs) {
    for (const std::string& spec : specs) parse_spec(spec);
}

void append_extra_tensors(const fs::path& out_dir, const std::vector<std::string>& specs) {
    if (specs.empty()) return;
    const fs::path path = out_dir / "model.safetensors";
    if (!fs::exists(path))
        throw std::runtime_error("--extra-tensor needs a single model.safetensors (no --shards)");
    std::ifstream in(path, std::ios::binary);
    const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uint64_t header_size = 0;
    for (int b = 0; b < 8; ++b) header_size |= uint64_t(uint8_t(file[b])) << (8 * b);
    const nlohmann::json header = nlohmann::json::parse(file.substr(8, header_size));
    const std::string data = file.substr(8 + header_size);

    std::vector<std::pair<std::string, std::string>> metadata;
    std::vector<StTensor> tensors;
    std::vector<std::pair<uint64_t, StTensor>> existing;  // by data offset, as written
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            for (const auto& [key, value] : entry.items())
                metadata.emplace_back(key, value.get<std::string>());
            continue;
        }
        const uint64_t begin = entry["data_offsets"][0], end = entry["data_offsets"][1];
        StTensor t{name, entry["dtype"], entry["shape"].get<std::vector<int64_t>>(), end - begin,
                   [&data, begin, end](std::ostream& os) {
                       os.write(data.data() + begin, static_cast<std::streamsize>(end - begin));
                   }};
        existing.emplace_back(begin, std::move(t));
    }
    std::sort(existing.begin(), existing.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [offset, t] : existing) tensors.push_back(std::move(t));
    for (const std::string& text : specs) {
        const Spec spec = parse_spec(text);
        if (header.contains(spec.name))
            throw std::runtime_error("--extra-tensor " + spec.name + ": the fixture has it");
        const std::string bytes = values(spec.dtype);
        tensors.push_back(
            {spec.name, spec.dtype, {1, kValues}, bytes.size(), [bytes](std::ostream& os) {
                 os.write(bytes.data(), bytes.size());
             }});
    }
    write_safetensors(path, tensors, metadata);
}

}  // namespace mkfixture
