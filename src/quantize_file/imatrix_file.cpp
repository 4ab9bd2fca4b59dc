// load_imatrix: the GGUF reader for files starting with "GGUF", the legacy layout otherwise
// (host-endian int32 counts and lengths, float32 values), every length checked before use.
#include "quantize_file/imatrix_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "format/gguf_file.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw_input_error(path.string(), "", "cannot open", "a readable imatrix file");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A cursor over the legacy file that refuses to read past the end.
class Cursor {
  public:
    Cursor(const std::vector<uint8_t>& bytes, std::string file)
        : bytes_(bytes), file_(std::move(file)) {}
    bool at_end() const { return pos_ == bytes_.size(); }
    bool has(uint64_t n) const { return n <= bytes_.size() - pos_; }
    int32_t i32(const std::string& field) {
        int32_t v;
        std::memcpy(&v, take(4, field), 4);
        return v;
    }
    const uint8_t* take(uint64_t n, const std::string& field) {
        if (!has(n))
            throw_input_error(file_, field,
                              "needs " + std::to_string(n) + " bytes at offset " +
                                  std::to_string(pos_) + ", the file ends first",
                              "a complete imatrix.dat (llama-imatrix's legacy format)");
        const uint8_t* p = bytes_.data() + pos_;
        pos_ += n;
        return p;
    }

  private:
    const std::vector<uint8_t>& bytes_;
    std::string file_;
    uint64_t pos_ = 0;
};

Imatrix load_legacy(const std::vector<uint8_t>& bytes, const std::string& file) {
    Imatrix result;
    result.legacy = true;
    Cursor in(bytes, file);
    const int32_t n_entries = in.i32("entry count");
    if (n_entries < 1) throw_input_error(file, "entry count", "no entries", "an imatrix with data");
    for (int32_t i = 0; i < n_entries; ++i) {
        const std::string where = "entry " + std::to_string(i + 1);
        const int32_t len = in.i32(where + " name length");
        if (len < 0) throw_input_error(file, where, "negative name length");
        const uint8_t* name_bytes = in.take(static_cast<uint64_t>(len), where + " name");
        // The reader keeps the name up to its first NUL.
        std::string name(reinterpret_cast<const char*>(name_bytes),
                         strnlen(reinterpret_cast<const char*>(name_bytes), len));
        const int32_t ncall = in.i32(where + " ncall");
        const int32_t nval = in.i32(where + " value count");
        if (nval < 1) throw_input_error(file, where + " (" + name + ")", "no values");
        const uint8_t* data = in.take(static_cast<uint64_t>(nval) * 4, where + " (" + name + ")");
        std::vector<float> sums(static_cast<size_t>(nval));
        std::memcpy(sums.data(), data, sums.size() * 4);
        // sums hold (sum / count) * ncall; divide by ncall, or keep them when ncall is 0.
        const int64_t n = ncall;
        if (n > 0)
            for (float& v : sums) v = v / static_cast<float>(n);
        result.entries[name] = std::move(sums);
    }
    // Optional trailer: chunk count, then the dataset name.
    if (!in.at_end() && in.has(4)) {
        result.chunk_count = in.i32("chunk count");
        if (in.has(4)) {
            const int32_t len = in.i32("dataset length");
            if (len > 0 && in.has(static_cast<uint64_t>(len))) {
                const uint8_t* p = in.take(static_cast<uint64_t>(len), "dataset");
                result.datasets.emplace_back(reinterpret_cast<const char*>(p),
                                             strnlen(reinterpret_cast<const char*>(p), len));
            }
        }
    }
    return result;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Imatrix load_gguf(const std::filesystem::path& path) {
    const std::string file = path.string();
    const auto gguf = GgufFile::open(path);
    Imatrix result;
    if (gguf->tensors().empty())
        throw_input_error(file, "tensors", "no data", "an imatrix with data");
    const GgufValue* datasets = gguf->find("imatrix.datasets");
    const GgufValue* chunk_count = gguf->find("imatrix.chunk_count");
    const GgufValue* chunk_size = gguf->find("imatrix.chunk_size");
    if (!datasets || !chunk_count || !chunk_size)
        throw_input_error(file, "imatrix.datasets/chunk_count/chunk_size",
                          "missing imatrix metadata (llama-quantize refuses such a file)",
                          "an imatrix written by llama-imatrix");
    if (datasets->is_array() && datasets->elem_type == GgufType::STRING)
        for (const GgufScalar& item : datasets->array)
            result.datasets.push_back(std::get<std::string>(item));
    if (!chunk_count->as_u32() || !chunk_size->as_u32())
        throw_input_error(file, "imatrix.chunk_count", "not UINT32",
                          "UINT32 as llama-imatrix writes");
    result.chunk_count = static_cast<int32_t>(*chunk_count->as_u32());

    struct Pair {
        const GgufTensorInfo* sums = nullptr;
        const GgufTensorInfo* counts = nullptr;
    };
    std::map<std::string, Pair> pairs;
    for (const GgufTensorInfo& t : gguf->tensors()) {
        if (ends_with(t.name, ".in_sum2"))
            pairs[t.name.substr(0, t.name.size() - 8)].sums = &t;
        else if (ends_with(t.name, ".counts"))
            pairs[t.name.substr(0, t.name.size() - 7)].counts = &t;
    }
    for (const auto& [name, pair] : pairs) {
        if (!pair.sums || !pair.counts)
            throw_input_error(file, name, "has in_sum2 without counts or counts without in_sum2",
                              "both tensors per weight");
        if (pair.sums->type != GgmlType::F32 || pair.counts->type != GgmlType::F32)
            throw_input_error(file, name, "sums and counts must be F32");
        const uint64_t nval = pair.sums->element_count();
        const uint64_t ncounts = pair.counts->element_count();
        if (ncounts == 0 || nval % ncounts != 0)
            throw_input_error(file, name,
                              std::to_string(nval) + " sums do not split into " +
                                  std::to_string(ncounts) + " equal slices",
                              "one count per expert slice");
        std::vector<float> sums(nval), counts(ncounts);
        std::memcpy(sums.data(), gguf->tensor_data(*pair.sums).data(), nval * 4);
        std::memcpy(counts.data(), gguf->tensor_data(*pair.counts).data(), ncounts * 4);
        const uint64_t ne0 = nval / ncounts;
        std::vector<float>& e = result.entries[name];
        e.resize(nval);
        for (uint64_t j = 0; j < ncounts; ++j) {
            const float count = static_cast<float>(std::lround(counts[j]));
            for (uint64_t i = 0; i < ne0; ++i)
                e[j * ne0 + i] = count > 0.0f ? sums[j * ne0 + i] / count : 1.0f;
        }
    }
    return result;
}

}  // namespace

Imatrix load_imatrix(const std::filesystem::path& path, const ImatrixFilter& filter) {
    const std::vector<uint8_t> bytes = read_bytes(path);
    const bool gguf = bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0;
    Imatrix result = gguf ? load_gguf(path) : load_legacy(bytes, path.string());
    auto holds_any = [](const std::string& name, const std::vector<std::string>& parts) {
        return std::any_of(parts.begin(), parts.end(), [&](const std::string& part) {
            return name.find(part) != std::string::npos;
        });
    };
    std::erase_if(result.entries,
                  [&](const auto& entry) { return holds_any(entry.first, filter.exclude); });
    if (!filter.include.empty())
        std::erase_if(result.entries,
                      [&](const auto& entry) { return !holds_any(entry.first, filter.include); });
    for (const auto& [name, values] : result.entries)
        for (size_t i = 0; i < values.size(); ++i)
            if (!std::isfinite(values[i]))
                throw_input_error(path.string(), name,
                                  "value " + std::to_string(i) + " is not finite",
                                  "an imatrix without NaN/Inf (llama-quantize refuses it too)");
    return result;
}

}  // namespace rebox
