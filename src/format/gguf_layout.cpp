// GGUF v3 writer: validates KVs and tensor infos as they are added, assigns canonical offsets
// (offset[i] = offset[i-1] + PAD(nbytes[i-1], alignment), 32 by default) and serializes the
// metadata block little-endian (types/n_dims 32-bit, counts/lengths/ne/offsets 64-bit). Whole
// files: gguf_write.cpp.
// By default it never writes general.alignment (the default 32 is what every reader assumes); a
// layout built with an explicit alignment (rebox meta keeps a file's own) may carry it.
#include "format/gguf_layout.hpp"

#include <bit>
#include <cstring>
#include <limits>

#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the GGUF writer assumes a little-endian host");

[[noreturn]] void throw_layout_error(const std::string& field, const std::string& what,
                                     const std::string& expected = "") {
    throw_input_error("gguf writer", field, what, expected);
}

class ByteWriter {
  public:
    explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}
    template <typename T>
    void put(T value) {
        const size_t at = out_.size();
        out_.resize(at + sizeof(T));
        std::memcpy(out_.data() + at, &value, sizeof(T));
    }
    void put_string(const std::string& text) {
        put<uint64_t>(text.size());
        out_.insert(out_.end(), text.begin(), text.end());
    }

  private:
    std::vector<uint8_t>& out_;
};

// Checks that the variant alternative and range match the declared type.
void check_scalar(const std::string& key, GgufType type, const GgufScalar& scalar) {
    const std::string type_name(gguf_type_name(type));
    auto fail = [&](const std::string& what) {
        throw_layout_error(key, what, "a " + type_name + " value");
    };
    auto unsigned_max = [&](uint64_t max) {
        const auto* v = std::get_if<uint64_t>(&scalar);
        if (v == nullptr) fail("value is not held as an unsigned integer");
        if (*v > max) fail(std::to_string(*v) + " is out of range");
    };
    auto signed_range = [&](int64_t min, int64_t max) {
        const auto* v = std::get_if<int64_t>(&scalar);
        if (v == nullptr) fail("value is not held as a signed integer");
        if (*v < min || *v > max) fail(std::to_string(*v) + " is out of range");
    };
    switch (type) {
        case GgufType::UINT8:
            return unsigned_max(UINT8_MAX);
        case GgufType::UINT16:
            return unsigned_max(UINT16_MAX);
        case GgufType::UINT32:
            return unsigned_max(UINT32_MAX);
        case GgufType::UINT64:
            return unsigned_max(UINT64_MAX);
        case GgufType::INT8:
            return signed_range(INT8_MIN, INT8_MAX);
        case GgufType::INT16:
            return signed_range(INT16_MIN, INT16_MAX);
        case GgufType::INT32:
            return signed_range(INT32_MIN, INT32_MAX);
        case GgufType::INT64:
            return signed_range(INT64_MIN, INT64_MAX);
        case GgufType::FLOAT32:
        case GgufType::FLOAT64: {
            const auto* v = std::get_if<double>(&scalar);
            if (v == nullptr) fail("value is not held as a floating-point number");
            if (type == GgufType::FLOAT32 && *v == *v &&
                static_cast<double>(static_cast<float>(*v)) != *v)
                fail("value is not exactly representable");
            return;
        }
        case GgufType::BOOL:
            if (!std::holds_alternative<bool>(scalar)) fail("value is not held as a bool");
            return;
        case GgufType::STRING: {
            const auto* s = std::get_if<std::string>(&scalar);
            if (s == nullptr) fail("value is not held as a string");
            if (s->size() > kGgufMaxStringLength) fail("string is longer than 1 GiB");
            return;
        }
        case GgufType::ARRAY:
            break;
    }
    fail("invalid type");
}

void check_kv(const std::string& key, const GgufValue& value) {
    if (key.empty()) throw_layout_error("key", "empty key", "a non-empty key");
    if (static_cast<uint32_t>(value.type) >= kGgufTypeCount)
        throw_layout_error(key, "invalid value type");
    if (!value.is_array()) return check_scalar(key, value.type, value.scalar);
    if (static_cast<uint32_t>(value.elem_type) >= kGgufTypeCount ||
        value.elem_type == GgufType::ARRAY)
        throw_layout_error(key, "invalid array element type (nested arrays are not supported)");
    if (value.array.size() > kGgufMaxArrayElements)
        throw_layout_error(key, "array has more than 1Gi elements");
    for (const GgufScalar& item : value.array) check_scalar(key, value.elem_type, item);
}

uint64_t scalar_size(GgufType type, const GgufScalar& scalar) {
    if (type == GgufType::STRING) return 8 + std::get<std::string>(scalar).size();
    return gguf_scalar_size(type);
}

uint64_t kv_size(const GgufKV& kv) {
    uint64_t size = 8 + kv.key.size() + 4;
    if (!kv.value.is_array()) return size + scalar_size(kv.value.type, kv.value.scalar);
    size += 4 + 8;
    for (const GgufScalar& item : kv.value.array) size += scalar_size(kv.value.elem_type, item);
    return size;
}

uint64_t tensor_info_size(const GgufTensorInfo& info) {
    return 8 + info.name.size() + 4 + 8 * info.ne.size() + 4 + 8;
}

void put_scalar(ByteWriter& out, GgufType type, const GgufScalar& scalar) {
    switch (type) {
        case GgufType::UINT8:
            return out.put(static_cast<uint8_t>(std::get<uint64_t>(scalar)));
        case GgufType::UINT16:
            return out.put(static_cast<uint16_t>(std::get<uint64_t>(scalar)));
        case GgufType::UINT32:
            return out.put(static_cast<uint32_t>(std::get<uint64_t>(scalar)));
        case GgufType::UINT64:
            return out.put(std::get<uint64_t>(scalar));
        case GgufType::INT8:
            return out.put(static_cast<int8_t>(std::get<int64_t>(scalar)));
        case GgufType::INT16:
            return out.put(static_cast<int16_t>(std::get<int64_t>(scalar)));
        case GgufType::INT32:
            return out.put(static_cast<int32_t>(std::get<int64_t>(scalar)));
        case GgufType::INT64:
            return out.put(std::get<int64_t>(scalar));
        case GgufType::FLOAT32:
            return out.put(static_cast<float>(std::get<double>(scalar)));
        case GgufType::FLOAT64:
            return out.put(std::get<double>(scalar));
        case GgufType::BOOL:
            return out.put(static_cast<uint8_t>(std::get<bool>(scalar) ? 1 : 0));
        case GgufType::STRING:
            return out.put_string(std::get<std::string>(scalar));
        case GgufType::ARRAY:
            return;
    }
}

}  // namespace

GgufLayout::GgufLayout(uint32_t alignment) : alignment_(alignment), alignment_key_allowed_(true) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        throw_layout_error("general.alignment",
                           std::to_string(alignment) + " is not a power of two",
                           "a non-zero power of two");
}

void GgufLayout::check_alignment_kv(const std::string& key, const GgufValue& value) const {
    if (key != "general.alignment") return;
    if (!alignment_key_allowed_)
        throw_layout_error(key, "rebox always writes the default alignment",
                           "no general.alignment key");
    if (value.as_u32() != alignment_)
        throw_layout_error(key, "value differs from the layout's alignment",
                           "UINT32 " + std::to_string(alignment_));
}

void GgufLayout::add_kv(std::string key, GgufValue value) {
    check_alignment_kv(key, value);
    check_kv(key, value);
    for (const GgufKV& kv : kvs_)
        if (kv.key == key) throw_layout_error(key, "duplicate key");
    kvs_.push_back(GgufKV{std::move(key), std::move(value)});
}

void GgufLayout::set_kv(std::string key, GgufValue value) {
    check_alignment_kv(key, value);
    check_kv(key, value);
    for (GgufKV& kv : kvs_) {
        if (kv.key == key) {
            kv.value = std::move(value);
            return;
        }
    }
    kvs_.push_back(GgufKV{std::move(key), std::move(value)});
}

void GgufLayout::add_tensor(std::string name, std::vector<int64_t> ne, GgmlType type) {
    const std::string field = "tensor '" + name + "'";
    if (name.size() > kGgmlMaxNameBytes)
        throw_layout_error(field, "name is " + std::to_string(name.size()) + " bytes long",
                           "at most 63 bytes");
    for (const GgufTensorInfo& t : tensors_)
        if (t.name == name) throw_layout_error(field, "duplicate tensor name");
    if (ne.empty() || ne.size() > kGgmlMaxDims)
        throw_layout_error(field, std::to_string(ne.size()) + " dimensions", "1..4");
    uint64_t elements = 1;
    for (size_t j = 0; j < ne.size(); ++j) {
        if (ne[j] < 1)
            throw_layout_error(field, "ne[" + std::to_string(j) + "] = " + std::to_string(ne[j]),
                               ">= 1");
        if (elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) /
                           static_cast<uint64_t>(ne[j]))
            throw_layout_error(field, "element count overflows int64");
        elements *= static_cast<uint64_t>(ne[j]);
    }
    const auto traits = ggml_type_traits(type);
    if (!traits)
        throw_layout_error(field, "unknown ggml type id " + std::to_string(ggml_type_id(type)));
    if (static_cast<uint64_t>(ne[0]) % traits->block_size != 0)
        throw_layout_error(field, "ne[0] = " + std::to_string(ne[0]) +
                                      " is not a multiple of the " + std::string(traits->name) +
                                      " block size " + std::to_string(traits->block_size));
    const auto nbytes = ggml_nbytes(type, ne);
    if (!nbytes || *nbytes > std::numeric_limits<uint64_t>::max() - alignment_ ||
        gguf_pad(*nbytes, alignment_) > std::numeric_limits<uint64_t>::max() - data_size_)
        throw_layout_error(field, "byte size overflows 64 bits");

    GgufTensorInfo info;
    info.name = std::move(name);
    info.ne = std::move(ne);
    info.type = type;
    info.offset = data_size_;
    info.nbytes = *nbytes;
    data_size_ += gguf_pad(info.nbytes, alignment_);
    tensors_.push_back(std::move(info));
}

uint64_t GgufLayout::metadata_size() const {
    uint64_t size = 4 + 4 + 8 + 8;
    for (const GgufKV& kv : kvs_) size += kv_size(kv);
    for (const GgufTensorInfo& t : tensors_) size += tensor_info_size(t);
    return size;
}

uint64_t GgufLayout::data_offset() const { return gguf_pad(metadata_size(), alignment_); }

uint64_t GgufLayout::file_size() const { return data_offset() + data_size_; }

std::vector<uint8_t> GgufLayout::serialize_metadata() const {
    std::vector<uint8_t> bytes;
    bytes.reserve(data_offset());
    ByteWriter out(bytes);
    out.put<uint32_t>(kGgufMagic);
    out.put<uint32_t>(kGgufVersion);
    out.put<uint64_t>(tensors_.size());
    out.put<uint64_t>(kvs_.size());
    for (const GgufKV& kv : kvs_) {
        out.put_string(kv.key);
        out.put<uint32_t>(static_cast<uint32_t>(kv.value.type));
        if (!kv.value.is_array()) {
            put_scalar(out, kv.value.type, kv.value.scalar);
            continue;
        }
        out.put<uint32_t>(static_cast<uint32_t>(kv.value.elem_type));
        out.put<uint64_t>(kv.value.array.size());
        for (const GgufScalar& item : kv.value.array) put_scalar(out, kv.value.elem_type, item);
    }
    for (const GgufTensorInfo& t : tensors_) {
        out.put_string(t.name);
        out.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
        for (int64_t d : t.ne) out.put<int64_t>(d);
        out.put<uint32_t>(ggml_type_id(t.type));
        out.put<uint64_t>(t.offset);
    }
    bytes.resize(gguf_pad(bytes.size(), alignment_), 0);  // zero padding up to the data section
    return bytes;
}

}  // namespace rebox
