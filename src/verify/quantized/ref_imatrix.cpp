// read_ref_imatrix: "GGUF" at the start picks the GGUF reader (the strict container reader verify
// reads the file under test with), anything else the legacy layout (little-endian int32 counts
// and lengths, float32 values), every length checked against the bytes left before it is used.
// Then the normalization of llama-quantize's load_imatrix and the non-finite check it makes.
#include "verify/quantized/ref_imatrix.hpp"

#include <cmath>
#include <cstring>

#include "format/gguf_file.hpp"
#include "format/mapped_file.hpp"
#include "rebox/error.hpp"

namespace rebox::verify_ref {
namespace {

constexpr const char* kLegacyFix = "a complete imatrix.dat as llama-imatrix writes it";
constexpr const char* kGgufFix = "an imatrix written by llama-imatrix";

// Reads the legacy layout front to back; never past the end.
class LegacyReader {
  public:
    LegacyReader(std::span<const uint8_t> bytes, const std::string& file)
        : bytes_(bytes), file_(file) {}

    int32_t int32(const std::string& field) {
        int32_t value = 0;
        std::memcpy(&value, take(4, field).data(), 4);
        return value;
    }
    std::span<const uint8_t> take(uint64_t count, const std::string& field) {
        if (count > bytes_.size() - position_)
            throw_input_error(file_, field,
                              "needs " + std::to_string(count) + " bytes at offset " +
                                  std::to_string(position_) + ", the file has " +
                                  std::to_string(bytes_.size() - position_) + " left",
                              kLegacyFix);
        const auto part = bytes_.subspan(position_, count);
        position_ += count;
        return part;
    }

  private:
    std::span<const uint8_t> bytes_;
    const std::string& file_;
    uint64_t position_ = 0;
};

void parse_legacy(std::span<const uint8_t> bytes, RefImatrix& imatrix) {
    const std::string& file = imatrix.file;
    LegacyReader in(bytes, file);
    const int32_t entry_count = in.int32("entry count");
    if (entry_count < 1)
        throw_input_error(file, "entry count", "is " + std::to_string(entry_count) + ", no entries",
                          kLegacyFix);
    for (int32_t i = 0; i < entry_count; ++i) {
        const std::string entry = "entry " + std::to_string(i + 1);
        const int32_t name_length = in.int32(entry + " name length");
        if (name_length < 0)
            throw_input_error(file, entry + " name length",
                              "is negative (" + std::to_string(name_length) + ")", kLegacyFix);
        const auto name_bytes = in.take(static_cast<uint64_t>(name_length), entry + " name");
        // llama.cpp keeps the name up to its first NUL.
        const char* name_chars = reinterpret_cast<const char*>(name_bytes.data());
        const std::string name(name_chars, strnlen(name_chars, name_bytes.size()));
        const std::string where = entry + " (" + name + ")";
        const int32_t ncall = in.int32(where + " ncall");
        const int32_t value_count = in.int32(where + " value count");
        if (value_count < 1)
            throw_input_error(file, where + " value count",
                              "is " + std::to_string(value_count) + ", no values", kLegacyFix);
        const auto data = in.take(static_cast<uint64_t>(value_count) * 4, where + " values");
        std::vector<float> values(static_cast<size_t>(value_count));
        std::memcpy(values.data(), data.data(), data.size());
        // The file holds mean * ncall; llama-quantize divides by ncall as a float.
        if (ncall > 0)
            for (float& value : values) value = value / static_cast<float>(ncall);
        imatrix.entries[name] = std::move(values);  // a repeated name: the last one, as llama's
    }
    // What follows (chunk count, dataset name) is optional and names only the quantize.imatrix.*
    // KVs, which verify does not derive: not read.
}

bool strip_suffix(std::string& name, std::string_view suffix) {
    if (name.size() < suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    name.resize(name.size() - suffix.size());
    return true;
}

// The F32 values of an imatrix tensor (the container reader checked its bytes lie in the file).
std::vector<float> f32_values(const GgufFile& gguf, const GgufTensorInfo& tensor) {
    const auto data = gguf.tensor_data(tensor);
    std::vector<float> values(data.size() / 4);
    std::memcpy(values.data(), data.data(), values.size() * 4);
    return values;
}

void parse_gguf(std::span<const uint8_t> bytes, RefImatrix& imatrix) {
    const std::string& file = imatrix.file;
    const auto gguf = GgufFile::parse(bytes, file);
    if (gguf->tensors().empty())
        throw_input_error(file, "tensors", "none, the imatrix holds no entries", kGgufFix);
    for (const char* key : {"imatrix.datasets", "imatrix.chunk_count", "imatrix.chunk_size"})
        if (gguf->find(key) == nullptr)
            throw_input_error(file, key, "missing (llama-quantize refuses an imatrix without it)",
                              kGgufFix);
    for (const char* key : {"imatrix.chunk_count", "imatrix.chunk_size"})
        if (!gguf->find(key)->as_u32())  // llama.cpp reads them as UINT32 and aborts otherwise
            throw_input_error(file, key, "is not a UINT32", kGgufFix);

    struct SumsAndCounts {
        const GgufTensorInfo* sums = nullptr;
        const GgufTensorInfo* counts = nullptr;
    };
    std::map<std::string, SumsAndCounts> pairs;
    for (const GgufTensorInfo& tensor : gguf->tensors()) {
        std::string name = tensor.name;
        if (strip_suffix(name, ".in_sum2"))
            pairs[name].sums = &tensor;
        else if (strip_suffix(name, ".counts"))
            pairs[name].counts = &tensor;
    }
    for (const auto& [name, pair] : pairs) {
        if (pair.sums == nullptr || pair.counts == nullptr)
            throw_input_error(
                file, name,
                pair.sums ? "has in_sum2 but no counts tensor" : "has counts but no in_sum2 tensor",
                "both " + name + ".in_sum2 and " + name + ".counts");
        for (const GgufTensorInfo* tensor : {pair.sums, pair.counts})
            if (tensor->type != GgmlType::F32)
                throw_input_error(file, tensor->name, "is not F32", kGgufFix);
        const std::vector<float> sums = f32_values(*gguf, *pair.sums);
        const std::vector<float> counts = f32_values(*gguf, *pair.counts);
        if (counts.empty() || sums.empty() || sums.size() % counts.size() != 0)
            throw_input_error(file, name,
                              std::to_string(sums.size()) + " sums do not split into " +
                                  std::to_string(counts.size()) + " equal slices",
                              "one count per expert slice of the sums");
        const size_t slice_values = sums.size() / counts.size();
        std::vector<float>& weights = imatrix.entries[name];
        weights.resize(sums.size());
        for (size_t slice = 0; slice < counts.size(); ++slice) {
            // lround is defined only for finite values inside long's range.
            const float raw = counts[slice];
            if (!std::isfinite(raw) || std::fabs(raw) >= 0x1p63f)
                throw_input_error(file, name + ".counts",
                                  "count " + std::to_string(slice) + " is not a finite token count",
                                  kGgufFix);
            const float count = static_cast<float>(std::lround(raw));
            for (size_t i = 0; i < slice_values; ++i) {
                const size_t at = slice * slice_values + i;
                weights[at] = count > 0.0f ? sums[at] / count : 1.0f;
            }
        }
    }
}

}  // namespace

RefImatrix parse_ref_imatrix(std::span<const uint8_t> bytes, const std::string& file) {
    RefImatrix imatrix;
    imatrix.file = file;
    imatrix.legacy = !(bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0);
    if (imatrix.legacy)
        parse_legacy(bytes, imatrix);
    else
        parse_gguf(bytes, imatrix);
    for (const auto& [name, weights] : imatrix.entries)
        for (size_t i = 0; i < weights.size(); ++i)
            if (!std::isfinite(weights[i]))
                throw_input_error(file, name,
                                  "normalized value " + std::to_string(i) +
                                      " is not finite (llama-quantize refuses such an imatrix)",
                                  "an imatrix without NaN or Inf");
    return imatrix;
}

RefImatrix read_ref_imatrix(const std::filesystem::path& path) {
    const MappedFile mapped(path);
    return parse_ref_imatrix(mapped.bytes(), path.string());
}

RefImatrixEntry ref_imatrix_entry(const RefImatrix& imatrix, std::string_view tensor_name,
                                  uint64_t values_per_row, uint64_t experts) {
    const auto found = imatrix.entries.find(std::string(tensor_name));
    if (found == imatrix.entries.end()) return {};
    const std::vector<float>& weights = found->second;
    if (experts != 0 && values_per_row <= UINT64_MAX / experts &&
        weights.size() == values_per_row * experts)
        return {weights, {}};
    if (tensor_name == "token_embd.weight" || tensor_name == "per_layer_token_embd.weight")
        return {};
    return {{},
            imatrix.file + ": " + std::string(tensor_name) + ": the imatrix entry has " +
                std::to_string(weights.size()) + " values, the tensor needs " +
                std::to_string(values_per_row) + " x " + std::to_string(experts) +
                " (ne[0] x experts; llama-quantize refuses this imatrix for this file; expected "
                "the imatrix the file was quantized with)"};
}

}  // namespace rebox::verify_ref
