// SafetensorsFile: validates the whole header (modelled on the HF `safetensors` crate's
// Metadata::validate) before exposing any tensor; tensor bytes are zero-copy spans.
#include "format/safetensors.hpp"

#include <simdjson.h>

#include <algorithm>
#include <numeric>
#include <unordered_set>
#include <utility>

#include "format/shape_text.hpp"
#include "printable.hpp"
#include "rebox/error.hpp"

namespace rebox {

namespace {

using detail::shape_text;

using detail::printable;

constexpr size_t kLengthPrefixBytes = 8;

std::string dtype_list() {
    return "one of BOOL, U8, I8, U16, I16, F16, BF16, U32, I32, F32, U64, I64, F64, F8_E4M3, "
           "F8_E5M2";
}

std::string offsets_text(uint64_t begin, uint64_t end) {
    std::string text = "[";
    text += std::to_string(begin);
    text += ", ";
    text += std::to_string(end);
    return text + "]";
}

// A JSON number that is a non-negative integer fitting uint64 (no floats, no negatives).
bool as_unsigned(simdjson::dom::element value, uint64_t* out) {
    switch (value.type()) {
        case simdjson::dom::element_type::UINT64:
            return value.get_uint64().get(*out) == simdjson::SUCCESS;
        case simdjson::dom::element_type::INT64: {
            int64_t signed_value = 0;
            if (value.get_int64().get(signed_value) != simdjson::SUCCESS || signed_value < 0)
                return false;
            *out = static_cast<uint64_t>(signed_value);
            return true;
        }
        default:
            return false;
    }
}

std::string json_text(simdjson::dom::element value) {
    std::string text = simdjson::minify(value);
    if (text.size() > 40) text = text.substr(0, 40) + "...";
    return printable(text);
}

// One tensor entry: {"dtype": NAME, "shape": [dims], "data_offsets": [begin, end]}.
StTensorInfo parse_tensor_entry(const std::string& file, std::string_view name,
                                simdjson::dom::element entry, uint64_t data_size) {
    const auto field = [&] { return printable(name); };  // built only for a message
    simdjson::dom::object object;
    if (entry.get(object) != simdjson::SUCCESS)
        throw_input_error(file, field(), "tensor entry is " + json_text(entry),
                          "an object with dtype, shape, data_offsets");
    std::optional<simdjson::dom::element> dtype_value, shape_value, offsets_value;
    for (auto [key, value] : object) {
        std::optional<simdjson::dom::element>* slot = nullptr;
        if (key == "dtype") slot = &dtype_value;
        if (key == "shape") slot = &shape_value;
        if (key == "data_offsets") slot = &offsets_value;
        if (slot == nullptr) continue;  // unknown keys are ignored, as serde does
        if (slot->has_value())
            throw_input_error(file, field(), "\"" + std::string(key) + "\" appears twice",
                              "each field once");
        *slot = value;
    }
    for (const auto& [slot, key] :
         {std::pair{&dtype_value, "dtype"}, std::pair{&shape_value, "shape"},
          std::pair{&offsets_value, "data_offsets"}}) {
        if (!slot->has_value())
            throw_input_error(file, field(), std::string("missing \"") + key + "\"",
                              "an object with dtype, shape, data_offsets");
    }

    StTensorInfo info;
    info.name = std::string(name);

    std::string_view dtype_name;
    if (dtype_value->get(dtype_name) != simdjson::SUCCESS)
        throw_input_error(file, field(), "dtype is " + json_text(*dtype_value),
                          "a dtype name string");
    const std::optional<StDtype> dtype = st_dtype_from_name(dtype_name);
    if (!dtype)
        throw_input_error(file, field(), "unknown dtype \"" + printable(dtype_name) + "\"",
                          dtype_list());
    info.dtype = *dtype;

    simdjson::dom::array shape;
    if (shape_value->get(shape) != simdjson::SUCCESS)
        throw_input_error(file, field(), "shape is " + json_text(*shape_value),
                          "an array of non-negative integers");
    size_t axis = 0;
    for (simdjson::dom::element dim_value : shape) {
        uint64_t dim = 0;
        if (!as_unsigned(dim_value, &dim) || dim > static_cast<uint64_t>(INT64_MAX))
            throw_input_error(file, field(),
                              "shape[" + std::to_string(axis) + "] is " + json_text(dim_value),
                              "a non-negative integer");
        info.shape.push_back(static_cast<int64_t>(dim));
        ++axis;
    }

    simdjson::dom::array offsets;
    if (offsets_value->get(offsets) != simdjson::SUCCESS || offsets.size() != 2)
        throw_input_error(file, field(), "data_offsets is " + json_text(*offsets_value),
                          "[begin, end] of two non-negative integers");
    if (!as_unsigned(offsets.at(0).value_unsafe(), &info.begin) ||
        !as_unsigned(offsets.at(1).value_unsafe(), &info.end))
        throw_input_error(file, field(), "data_offsets is " + json_text(*offsets_value),
                          "[begin, end] of two non-negative integers");
    if (info.begin > info.end)
        throw_input_error(file, field(),
                          "data_offsets " + offsets_text(info.begin, info.end) + " has begin > end",
                          "begin <= end");
    if (info.end > data_size)
        throw_input_error(file, field(),
                          "data_offsets end " + std::to_string(info.end) +
                              " is past the end of the data area (" + std::to_string(data_size) +
                              " bytes)",
                          "end <= data area size");

    uint64_t element_count = 1;
    for (int64_t dim : info.shape) {
        if (__builtin_mul_overflow(element_count, static_cast<uint64_t>(dim), &element_count))
            throw_input_error(
                file, field(),
                "element count of shape " + shape_text(info.shape) + " overflows 64 bits",
                "a shape whose byte size fits the file");
    }
    uint64_t byte_count = 0;
    if (__builtin_mul_overflow(element_count, st_dtype_size(info.dtype), &byte_count))
        throw_input_error(file, field(),
                          "byte size of shape " + shape_text(info.shape) + " x " +
                              std::string(dtype_name) + " overflows 64 bits",
                          "a shape whose byte size fits the file");
    if (byte_count != info.end - info.begin)
        throw_input_error(file, field(),
                          "shape " + shape_text(info.shape) + " x " + std::string(dtype_name) +
                              " (" + std::to_string(st_dtype_size(info.dtype)) + " bytes) is " +
                              std::to_string(byte_count) + " bytes but data_offsets " +
                              offsets_text(info.begin, info.end) + " span " +
                              std::to_string(info.end - info.begin),
                          "end - begin == element count x dtype size");
    return info;
}

std::map<std::string, std::string> parse_metadata(const std::string& file,
                                                  simdjson::dom::element value) {
    simdjson::dom::object object;
    if (value.get(object) != simdjson::SUCCESS)
        throw_input_error(file, "__metadata__", "is " + json_text(value),
                          "an object of string values");
    std::map<std::string, std::string> metadata;
    for (auto [key, entry] : object) {
        std::string_view text;
        if (entry.get(text) != simdjson::SUCCESS)
            throw_input_error(
                file, "__metadata__",
                "value of \"" + printable(key) + "\" is " + json_text(entry) + ", not a string",
                "string values only");
        if (!metadata.emplace(std::string(key), std::string(text)).second)
            throw_input_error(file, "__metadata__", "key \"" + printable(key) + "\" appears twice",
                              "unique keys");
    }
    return metadata;
}

// The crate's rule: sorted by data_offsets, the spans tile [0, data_size) exactly.
void check_tiling(const std::string& file, const std::vector<StTensorInfo>& tensors,
                  uint64_t data_size) {
    std::vector<size_t> order(tensors.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::pair(tensors[a].begin, tensors[a].end) <
               std::pair(tensors[b].begin, tensors[b].end);
    });
    uint64_t covered = 0;
    const StTensorInfo* previous = nullptr;
    for (size_t index : order) {
        const StTensorInfo& tensor = tensors[index];
        const auto span = [&] { return offsets_text(tensor.begin, tensor.end); };
        if (tensor.begin < covered)
            throw_input_error(file, printable(tensor.name),
                              "data_offsets " + span() + " overlaps tensor \"" +
                                  printable(previous->name) + "\" which ends at " +
                                  std::to_string(covered),
                              "begin == " + std::to_string(covered));
        if (tensor.begin > covered)
            throw_input_error(
                file, printable(tensor.name),
                "data_offsets " + span() + " leaves a hole of " +
                    std::to_string(tensor.begin - covered) + " bytes after " +
                    (previous ? "tensor \"" + printable(previous->name) + "\"" : "the data start"),
                "begin == " + std::to_string(covered));
        covered = tensor.end;
        previous = &tensor;
    }
    if (covered != data_size)
        throw_input_error(file, "data_offsets",
                          "tensors cover " + std::to_string(covered) +
                              " bytes but the data area has " + std::to_string(data_size) +
                              " (trailing bytes)",
                          "the last tensor to end at the end of the file");
}

}  // namespace

std::shared_ptr<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
    std::shared_ptr<SafetensorsFile> file(new SafetensorsFile());
    file->path_ = path;
    file->name_ = path.string();
    file->mapped_ = std::make_unique<MappedFile>(path);
    file->load(file->mapped_->bytes());
    // Everything the header says is parsed into tensors_ and metadata_: its pages (megabytes for
    // tens of thousands of entries) leave the resident set; a later read re-maps them.
    file->mapped_->release(0, kLengthPrefixBytes + file->header_size_);
    return file;
}

std::shared_ptr<SafetensorsFile> SafetensorsFile::parse(std::span<const uint8_t> bytes,
                                                        std::string name) {
    std::shared_ptr<SafetensorsFile> file(new SafetensorsFile());
    file->path_ = name;
    file->name_ = std::move(name);
    file->load(bytes);
    return file;
}

void SafetensorsFile::load(std::span<const uint8_t> bytes) {
    const std::string& file = name_;
    if (bytes.size() < kLengthPrefixBytes)
        throw_input_error(file, "header length",
                          "file is " + std::to_string(bytes.size()) +
                              " bytes, too short for the 8-byte header length",
                          "at least 8 bytes");
    uint64_t header_size = 0;
    for (size_t i = 0; i < kLengthPrefixBytes; ++i)
        header_size |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    if (header_size > kSafetensorsMaxHeaderBytes)
        throw_input_error(file, "header length",
                          "header length " + std::to_string(header_size) + " is over the limit",
                          "at most " + std::to_string(kSafetensorsMaxHeaderBytes) + " bytes");
    if (header_size > bytes.size() - kLengthPrefixBytes)
        throw_input_error(file, "header length",
                          "header length " + std::to_string(header_size) +
                              " runs past the end of the file (" + std::to_string(bytes.size()) +
                              " bytes)",
                          "8 + header length <= file size");
    const uint64_t data_size = bytes.size() - kLengthPrefixBytes - header_size;

    // simdjson needs padding after the text: copy the header only, never the tensor data.
    const simdjson::padded_string header_text(
        reinterpret_cast<const char*>(bytes.data() + kLengthPrefixBytes), header_size);
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (const auto error = parser.parse(header_text).get(root); error != simdjson::SUCCESS)
        throw_input_error(file, "header",
                          std::string("not valid JSON: ") + simdjson::error_message(error),
                          "a UTF-8 JSON object");
    simdjson::dom::object root_object;
    if (root.get(root_object) != simdjson::SUCCESS)
        throw_input_error(file, "header", "JSON is " + json_text(root) + ", not an object",
                          "a JSON object of tensor entries");

    // tensors_ never reallocates below (reserved for every key), so the index's views of its
    // names stay valid, and the index is also the duplicate check: one hash table per file.
    // (The header's size limit keeps the key count far below NameIndex's 2^32 positions.)
    const size_t keys = root_object.size();
    tensors_.reserve(keys);
    index_by_name_.reserve(keys);
    const auto name_at = [this](size_t i) -> std::string_view { return tensors_[i].name; };
    bool seen_metadata = false;
    for (auto [key, value] : root_object) {
        if (key == "__metadata__" ? seen_metadata
                                  : index_by_name_.find(key, name_at) != NameIndex::npos)
            throw_input_error(file, printable(key), "duplicate tensor name", "unique names");
        if (key == "__metadata__") {
            seen_metadata = true;
            metadata_ = parse_metadata(file, value);
        } else {
            tensors_.push_back(parse_tensor_entry(file, key, value, data_size));
            index_by_name_.insert_absent(tensors_.back().name, tensors_.size() - 1);
        }
    }
    check_tiling(file, tensors_, data_size);

    bytes_ = bytes;
    header_size_ = header_size;
}

const StTensorInfo* SafetensorsFile::find(std::string_view name) const {
    const size_t at = index_by_name_.find(
        name, [this](size_t i) -> std::string_view { return tensors_[i].name; });
    return at == NameIndex::npos ? nullptr : &tensors_[at];
}

std::span<const uint8_t> SafetensorsFile::data(const StTensorInfo& tensor) const {
    const uint64_t data_start = kLengthPrefixBytes + header_size_;
    return bytes_.subspan(data_start + tensor.begin, tensor.end - tensor.begin);
}

}  // namespace rebox
