// Strict GGUF v2/v3 reader. Every rule of llama.cpp's ggml/src/gguf.cpp (docs/gguf.md §1.6) is
// checked before a value is used; every read is bounds-checked first and no allocation is sized
// by a length that has not been checked against the bytes left in the file.
#include "format/gguf_file.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_set>

#include "format/printable.hpp"
#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader assumes a little-endian host");

// Smallest possible encodings, used to reject counts that cannot fit before allocating for them.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;  // key length, 1-byte key, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes =
    8 + 4 + 8 + 4 + 8;  // name length, n_dims, 1 dim, type, offset

uint64_t pad_to(uint64_t x, uint64_t n) { return (x + n - 1) / n * n; }

// Keys and tensor names come from the file: escape anything that would break a one-line message.
std::string printable(std::string_view text) { return detail::printable(text, 100); }

// Reads little-endian fields from the image; throws "FILE: FIELD: truncated at byte N" before
// reading past the end.
class Cursor {
  public:
    Cursor(std::span<const uint8_t> bytes, const std::string& file) : bytes_(bytes), file_(file) {}

    size_t pos() const { return pos_; }
    uint64_t remaining() const { return bytes_.size() - pos_; }

    void need(uint64_t count, std::string_view field) const {
        if (count > remaining())
            throw_input_error(
                file_, std::string(field), "truncated at byte " + std::to_string(pos_),
                std::to_string(count) + " more bytes, file has " + std::to_string(bytes_.size()));
    }

    template <typename T>
    T read(std::string_view field) {
        need(sizeof(T), field);
        T value;
        std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return value;
    }

    // Counts memory the decoded header will hold. Bounds on the file alone are not enough: an
    // array element of one byte on disk becomes a 40-byte GgufScalar in memory.
    void charge(uint64_t bytes, std::string_view field) {
        if (bytes > kGgufMaxMetadataMemory - charged_)
            throw_input_error(file_, std::string(field),
                              "the header would need more than " +
                                  std::to_string(kGgufMaxMetadataMemory >> 20) +
                                  " MiB of memory once decoded (" +
                                  std::to_string(charged_ + bytes) + " bytes so far)",
                              "smaller metadata arrays");
        charged_ += bytes;
    }

    std::string read_string(std::string_view field) {
        const uint64_t length = read<uint64_t>(field);
        if (length > kGgufMaxStringLength)
            throw_input_error(file_, std::string(field),
                              "string length " + std::to_string(length) + " exceeds 1 GiB",
                              "at most " + std::to_string(kGgufMaxStringLength));
        need(length, field);
        charge(length, field);
        std::string text(reinterpret_cast<const char*>(bytes_.data() + pos_), length);
        pos_ += length;
        return text;
    }

  private:
    std::span<const uint8_t> bytes_;
    const std::string& file_;
    size_t pos_ = 0;
    uint64_t charged_ = 0;
};

GgufScalar read_scalar(Cursor& cursor, GgufType type, std::string_view field) {
    switch (type) {
        case GgufType::UINT8:
            return uint64_t{cursor.read<uint8_t>(field)};
        case GgufType::INT8:
            return int64_t{cursor.read<int8_t>(field)};
        case GgufType::UINT16:
            return uint64_t{cursor.read<uint16_t>(field)};
        case GgufType::INT16:
            return int64_t{cursor.read<int16_t>(field)};
        case GgufType::UINT32:
            return uint64_t{cursor.read<uint32_t>(field)};
        case GgufType::INT32:
            return int64_t{cursor.read<int32_t>(field)};
        case GgufType::FLOAT32:
            return double{cursor.read<float>(field)};
        case GgufType::BOOL:
            return cursor.read<uint8_t>(field) != 0;  // as gguf.cpp: any non-zero byte is true
        case GgufType::STRING:
            return cursor.read_string(field);
        case GgufType::UINT64:
            return cursor.read<uint64_t>(field);
        case GgufType::INT64:
            return cursor.read<int64_t>(field);
        case GgufType::FLOAT64:
            return cursor.read<double>(field);
        case GgufType::ARRAY:
            break;
    }
    return uint64_t{0};  // unreachable: callers pass only scalar types
}

GgufValue read_value(Cursor& cursor, const std::string& file, const std::string& field,
                     uint32_t type_id) {
    if (type_id >= kGgufTypeCount)
        throw_input_error(file, field, "invalid value type " + std::to_string(type_id), "0..12");
    GgufValue value;
    value.type = static_cast<GgufType>(type_id);
    if (value.type != GgufType::ARRAY) {
        value.scalar = read_scalar(cursor, value.type, field);
        return value;
    }
    const uint32_t elem_id = cursor.read<uint32_t>(field);
    if (elem_id >= kGgufTypeCount || elem_id == static_cast<uint32_t>(GgufType::ARRAY))
        throw_input_error(file, field,
                          "invalid array element type " + std::to_string(elem_id) +
                              (elem_id == 9 ? " (nested arrays are not supported)" : ""),
                          "0..8 or 10..12");
    value.elem_type = static_cast<GgufType>(elem_id);
    const uint64_t count = cursor.read<uint64_t>(field);
    if (count > kGgufMaxArrayElements)
        throw_input_error(file, field,
                          "array of " + std::to_string(count) + " elements exceeds 1Gi",
                          "at most " + std::to_string(kGgufMaxArrayElements));
    // Strings take at least their 8-byte length each.
    const uint64_t min_elem_size =
        value.elem_type == GgufType::STRING ? 8 : gguf_scalar_size(value.elem_type);
    if (count * min_elem_size > cursor.remaining())
        throw_input_error(file, field,
                          "array of " + std::to_string(count) + " elements needs at least " +
                              std::to_string(count * min_elem_size) + " bytes, truncated at byte " +
                              std::to_string(cursor.pos()),
                          std::to_string(cursor.remaining()) + " bytes or fewer");
    cursor.charge(count * sizeof(GgufScalar), field);
    value.array.reserve(count);
    for (uint64_t i = 0; i < count; ++i)
        value.array.push_back(read_scalar(cursor, value.elem_type, field));
    return value;
}

void check_version(const std::string& file, uint32_t version) {
    if (version == 0) throw_input_error(file, "version", "0 is not a GGUF version", "2 or 3");
    if ((version & 0xFFFF) == 0)
        throw_input_error(file, "version",
                          std::to_string(version) + " is byte-swapped (a big-endian GGUF file?)",
                          "2 or 3, little-endian");
    if (version == 1) throw_input_error(file, "version", "GGUFv1 is no longer supported", "2 or 3");
    if (version > kGgufVersion)
        throw_input_error(file, "version", std::to_string(version) + " is not supported", "2 or 3");
}

uint32_t read_alignment(const std::string& file, const GgufValue* value) {
    if (value == nullptr) return kGgufDefaultAlignment;
    if (value->type != GgufType::UINT32)
        throw_input_error(file, "general.alignment",
                          "has type " + std::string(gguf_type_name(value->type)), "UINT32");
    const uint32_t alignment = *value->as_u32();
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        throw_input_error(file, "general.alignment",
                          std::to_string(alignment) + " is not a power of two",
                          "a non-zero power of two");
    return alignment;
}

}  // namespace

uint64_t GgufTensorInfo::element_count() const {
    uint64_t count = 1;
    for (int64_t d : ne) count *= static_cast<uint64_t>(d);
    return count;
}

std::unique_ptr<GgufFile> GgufFile::open(const std::filesystem::path& path) {
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->name_ = path.string();
    file->mapped_ = std::make_unique<MappedFile>(path);
    file->bytes_ = file->mapped_->bytes();
    file->load();
    return file;
}

std::unique_ptr<GgufFile> GgufFile::parse(std::span<const uint8_t> bytes, std::string name) {
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->name_ = std::move(name);
    file->bytes_ = bytes;
    file->load();
    return file;
}

const GgufValue* GgufFile::find(std::string_view key) const {
    for (const GgufKV& kv : kvs_)
        if (kv.key == key) return &kv.value;
    return nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
    for (const GgufTensorInfo& tensor : tensors_)
        if (tensor.name == name) return &tensor;
    return nullptr;
}

std::span<const uint8_t> GgufFile::tensor_data(const GgufTensorInfo& tensor) const {
    return bytes_.subspan(data_offset_ + tensor.offset, tensor.nbytes);  // bounds checked by load()
}

void GgufFile::load() {
    const std::string& file = name_;
    Cursor cursor(bytes_, file);

    // Header (docs/gguf.md §1.1).
    cursor.need(4, "magic");
    if (std::memcmp(bytes_.data(), "GGUF", 4) != 0) {
        std::string got;
        for (size_t i = 0; i < 4; ++i) {
            const char c = static_cast<char>(bytes_[i]);
            got += (c >= 0x20 && c < 0x7f) ? c : '?';
        }
        throw_input_error(file, "magic", "not a GGUF file (starts with '" + got + "')", "'GGUF'");
    }
    cursor.read<uint32_t>("magic");
    version_ = cursor.read<uint32_t>("version");
    check_version(file, version_);
    const int64_t tensor_count = cursor.read<int64_t>("tensor_count");
    const int64_t kv_count = cursor.read<int64_t>("kv_count");
    if (tensor_count < 0)
        throw_input_error(file, "tensor_count", std::to_string(tensor_count) + " is negative",
                          ">= 0");
    if (kv_count < 0)
        throw_input_error(file, "kv_count", std::to_string(kv_count) + " is negative", ">= 0");
    if (static_cast<uint64_t>(kv_count) > cursor.remaining() / kMinKvBytes)
        throw_input_error(file, "kv_count",
                          std::to_string(kv_count) + " pairs cannot fit in the " +
                              std::to_string(cursor.remaining()) + " bytes after the header",
                          "at most " + std::to_string(cursor.remaining() / kMinKvBytes));
    if (static_cast<uint64_t>(tensor_count) > cursor.remaining() / kMinTensorInfoBytes)
        throw_input_error(file, "tensor_count",
                          std::to_string(tensor_count) + " tensor infos cannot fit in the " +
                              std::to_string(cursor.remaining()) + " bytes after the header",
                          "at most " + std::to_string(cursor.remaining() / kMinTensorInfoBytes));

    try {
        // Key/value pairs (§1.3).
        kvs_.reserve(static_cast<size_t>(kv_count));
        std::unordered_set<std::string> keys;
        for (int64_t i = 0; i < kv_count; ++i) {
            const std::string key_field = "kv[" + std::to_string(i) + "] key";
            std::string key = cursor.read_string(key_field);
            if (key.empty()) throw_input_error(file, key_field, "empty key", "a non-empty key");
            const std::string field = printable(key);
            if (!keys.insert(key).second) throw_input_error(file, field, "duplicate key");
            const uint32_t type_id = cursor.read<uint32_t>(field);
            GgufValue value = read_value(cursor, file, field, type_id);
            kvs_.push_back(GgufKV{std::move(key), std::move(value)});
        }
        alignment_ = read_alignment(file, find("general.alignment"));

        // Tensor infos (§1.4) with canonical offsets (§1.5).
        tensors_.reserve(static_cast<size_t>(tensor_count));
        std::unordered_set<std::string> names;
        uint64_t expected_offset = 0;
        for (int64_t i = 0; i < tensor_count; ++i) {
            const std::string index_field = "tensor[" + std::to_string(i) + "] name";
            GgufTensorInfo info;
            info.name = cursor.read_string(index_field);
            if (info.name.size() > kGgmlMaxNameBytes)
                throw_input_error(file, index_field,
                                  "'" + printable(info.name) + "' is " +
                                      std::to_string(info.name.size()) + " bytes long",
                                  "at most 63 bytes");
            const std::string field = "tensor '" + printable(info.name) + "'";
            if (!names.insert(info.name).second)
                throw_input_error(file, field, "duplicate tensor name");

            const uint32_t n_dims = cursor.read<uint32_t>(field);
            if (n_dims == 0 || n_dims > kGgmlMaxDims)
                throw_input_error(file, field, "n_dims = " + std::to_string(n_dims), "1..4");
            cursor.need(8ull * n_dims, field);
            uint64_t elements = 1;
            for (uint32_t j = 0; j < n_dims; ++j) {
                const int64_t d = cursor.read<int64_t>(field);
                const std::string dim = "ne[" + std::to_string(j) + "] = " + std::to_string(d);
                if (d < 0) throw_input_error(file, field, dim + " is negative", ">= 1");
                if (d == 0)
                    throw_input_error(file, field, dim + " is a zero-sized dimension", ">= 1");
                if (elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) /
                                   static_cast<uint64_t>(d))
                    throw_input_error(file, field, "element count overflows int64 at " + dim);
                elements *= static_cast<uint64_t>(d);
                info.ne.push_back(d);
            }

            const uint32_t type_id = cursor.read<uint32_t>(field);
            info.type = static_cast<GgmlType>(type_id);
            const auto traits = ggml_type_traits(info.type);
            if (!traits) {
                if (type_id >= kGgmlTypeCount)
                    throw_input_error(file, field,
                                      "type id " + std::to_string(type_id) + " is unknown",
                                      "0.." + std::to_string(kGgmlTypeCount - 1));
                throw_input_error(file, field,
                                  "type id " + std::to_string(type_id) + " was removed from ggml",
                                  "a supported ggml type");
            }
            if (static_cast<uint64_t>(info.ne[0]) % traits->block_size != 0)
                throw_input_error(file, field,
                                  "ne[0] = " + std::to_string(info.ne[0]) +
                                      " is not a multiple of the " + std::string(traits->name) +
                                      " block size " + std::to_string(traits->block_size));
            const uint64_t blocks = elements / traits->block_size;
            if (blocks > std::numeric_limits<uint64_t>::max() / traits->type_size)
                throw_input_error(file, field,
                                  "byte size of " + std::to_string(elements) + " " +
                                      std::string(traits->name) + " elements overflows 64 bits");
            info.nbytes = blocks * traits->type_size;

            info.offset = cursor.read<uint64_t>(field);
            if (info.offset != expected_offset)
                throw_input_error(file, field,
                                  "offset " + std::to_string(info.offset) + " is not canonical",
                                  std::to_string(expected_offset) +
                                      ", the sum of the previous tensors' sizes padded to " +
                                      std::to_string(alignment_));
            constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
            if (info.nbytes > kMax - (alignment_ - 1) ||
                pad_to(info.nbytes, alignment_) > kMax - expected_offset)
                throw_input_error(file, field, "data section size overflows 64 bits");
            expected_offset += pad_to(info.nbytes, alignment_);
            tensors_.push_back(std::move(info));
        }
    } catch (const std::bad_alloc&) {
        throw_input_error(file, "", "out of memory while reading the metadata");
    }

    // Data section (§1.5): starts at PAD(meta_end, alignment); each tensor lies inside the file.
    meta_end_ = cursor.pos();
    data_offset_ = pad_to(meta_end_, alignment_);
    const uint64_t size = bytes_.size();
    if (!tensors_.empty() && data_offset_ > size)
        throw_input_error(
            file, "data section",
            "starts at byte " + std::to_string(data_offset_) + ", past the end of the file",
            "a file of at least " + std::to_string(data_offset_) + " bytes, got " +
                std::to_string(size));
    for (const GgufTensorInfo& info : tensors_) {
        if (info.offset > size - data_offset_ || info.nbytes > size - data_offset_ - info.offset)
            throw_input_error(file, "tensor '" + printable(info.name) + "'",
                              "data (" + std::to_string(info.nbytes) + " bytes at data offset " +
                                  std::to_string(info.offset) + ") runs past the end of the file",
                              "a file of at least " + std::to_string(data_offset_) + " + " +
                                  std::to_string(info.offset) + " + " +
                                  std::to_string(info.nbytes) + " bytes, got " +
                                  std::to_string(size));
    }
}

}  // namespace rebox
