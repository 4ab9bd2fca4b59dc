// GGUF metadata values: type names and sizes, factories, strict typed accessors and the short
// human rendering used by `rebox inspect` and error messages.
#include "rebox/gguf_value.hpp"

#include <array>
#include <charconv>
#include <limits>

#include "format/printable.hpp"

namespace rebox {
namespace {

constexpr std::array<std::string_view, kGgufTypeCount> kTypeNames = {
    "UINT8", "INT8",   "UINT16", "INT16",  "UINT32", "INT32",  "FLOAT32",
    "BOOL",  "STRING", "ARRAY",  "UINT64", "INT64",  "FLOAT64"};

constexpr std::array<size_t, kGgufTypeCount> kScalarSizes = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

GgufValue scalar_value(GgufType type, GgufScalar scalar) {
    GgufValue value;
    value.type = type;
    value.scalar = std::move(scalar);
    return value;
}

// Single-quoted, control characters escaped, cut at max_chars bytes (then "...").
std::string quote(const std::string& text, size_t max_chars) {
    std::string out = "'";
    const size_t shown = std::min(text.size(), max_chars);
    for (size_t i = 0; i < shown; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\\' || c == '\'') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (detail::is_control_byte(c)) {
            detail::append_hex_escape(out, c);
        } else {
            out += static_cast<char>(c);
        }
    }
    out += "'";
    if (shown < text.size()) out += "...";
    return out;
}

template <typename T>
std::string shortest(T v) {
    char buf[64];
    const auto result = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, result.ptr);
}

std::string scalar_to_string(GgufType type, const GgufScalar& scalar, size_t max_chars) {
    if (const auto* u = std::get_if<uint64_t>(&scalar)) return std::to_string(*u);
    if (const auto* i = std::get_if<int64_t>(&scalar)) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(&scalar)) {
        if (type == GgufType::FLOAT32) return shortest(static_cast<float>(*d));
        return shortest(*d);
    }
    if (const auto* b = std::get_if<bool>(&scalar)) return *b ? "true" : "false";
    return quote(std::get<std::string>(scalar), max_chars);
}

}  // namespace

std::string_view gguf_type_name(GgufType type) {
    const auto id = static_cast<uint32_t>(type);
    return id < kGgufTypeCount ? kTypeNames[id] : std::string_view("INVALID");
}

size_t gguf_scalar_size(GgufType type) {
    const auto id = static_cast<uint32_t>(type);
    return id < kGgufTypeCount ? kScalarSizes[id] : 0;
}

GgufValue GgufValue::u8(uint8_t v) { return scalar_value(GgufType::UINT8, uint64_t{v}); }
GgufValue GgufValue::u16(uint16_t v) { return scalar_value(GgufType::UINT16, uint64_t{v}); }
GgufValue GgufValue::u32(uint32_t v) { return scalar_value(GgufType::UINT32, uint64_t{v}); }
GgufValue GgufValue::u64(uint64_t v) { return scalar_value(GgufType::UINT64, v); }
GgufValue GgufValue::i32(int32_t v) { return scalar_value(GgufType::INT32, int64_t{v}); }
GgufValue GgufValue::i64(int64_t v) { return scalar_value(GgufType::INT64, v); }
GgufValue GgufValue::f32(float v) { return scalar_value(GgufType::FLOAT32, double{v}); }
GgufValue GgufValue::f64(double v) { return scalar_value(GgufType::FLOAT64, v); }
GgufValue GgufValue::boolean(bool v) { return scalar_value(GgufType::BOOL, v); }
GgufValue GgufValue::str(std::string v) { return scalar_value(GgufType::STRING, std::move(v)); }

GgufValue GgufValue::string_array(std::vector<std::string> v) {
    std::vector<GgufScalar> items;
    items.reserve(v.size());
    for (std::string& s : v) items.emplace_back(std::move(s));
    return array_of(GgufType::STRING, std::move(items));
}

GgufValue GgufValue::i32_array(const std::vector<int32_t>& v) {
    std::vector<GgufScalar> items;
    items.reserve(v.size());
    for (int32_t x : v) items.emplace_back(int64_t{x});
    return array_of(GgufType::INT32, std::move(items));
}

GgufValue GgufValue::f32_array(const std::vector<float>& v) {
    std::vector<GgufScalar> items;
    items.reserve(v.size());
    for (float x : v) items.emplace_back(double{x});
    return array_of(GgufType::FLOAT32, std::move(items));
}

GgufValue GgufValue::array_of(GgufType elem_type, std::vector<GgufScalar> items) {
    GgufValue value;
    value.type = GgufType::ARRAY;
    value.elem_type = elem_type;
    value.array = std::move(items);
    return value;
}

std::optional<uint32_t> GgufValue::as_u32() const {
    if (type != GgufType::UINT32) return std::nullopt;
    const auto* v = std::get_if<uint64_t>(&scalar);
    if (v == nullptr || *v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
    return static_cast<uint32_t>(*v);
}

std::optional<uint16_t> GgufValue::as_u16() const {
    if (type != GgufType::UINT16) return std::nullopt;
    const auto* v = std::get_if<uint64_t>(&scalar);
    if (v == nullptr || *v > std::numeric_limits<uint16_t>::max()) return std::nullopt;
    return static_cast<uint16_t>(*v);
}

std::optional<int32_t> GgufValue::as_i32() const {
    if (type != GgufType::INT32) return std::nullopt;
    const auto* v = std::get_if<int64_t>(&scalar);
    if (v == nullptr || *v < std::numeric_limits<int32_t>::min() ||
        *v > std::numeric_limits<int32_t>::max())
        return std::nullopt;
    return static_cast<int32_t>(*v);
}

std::optional<float> GgufValue::as_f32() const {
    if (type != GgufType::FLOAT32) return std::nullopt;
    const auto* v = std::get_if<double>(&scalar);
    if (v == nullptr) return std::nullopt;
    return static_cast<float>(*v);
}

std::optional<bool> GgufValue::as_bool() const {
    if (type != GgufType::BOOL) return std::nullopt;
    const auto* v = std::get_if<bool>(&scalar);
    if (v == nullptr) return std::nullopt;
    return *v;
}

const std::string* GgufValue::as_string() const {
    if (type != GgufType::STRING) return nullptr;
    return std::get_if<std::string>(&scalar);
}

std::optional<int64_t> GgufValue::as_integer() const {
    switch (type) {
        case GgufType::UINT8:
        case GgufType::UINT16:
        case GgufType::UINT32:
        case GgufType::UINT64: {
            const auto* v = std::get_if<uint64_t>(&scalar);
            if (v == nullptr || *v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                return std::nullopt;
            return static_cast<int64_t>(*v);
        }
        case GgufType::INT8:
        case GgufType::INT16:
        case GgufType::INT32:
        case GgufType::INT64: {
            const auto* v = std::get_if<int64_t>(&scalar);
            if (v == nullptr) return std::nullopt;
            return *v;
        }
        default:
            return std::nullopt;
    }
}

std::string gguf_value_to_string(const GgufValue& value, size_t max_chars, size_t max_items) {
    if (!value.is_array()) return scalar_to_string(value.type, value.scalar, max_chars);
    std::string out = "[" + std::string(gguf_type_name(value.elem_type)) + "] x" +
                      std::to_string(value.array.size()) + ":";
    const size_t shown = std::min(value.array.size(), max_items);
    for (size_t i = 0; i < shown; ++i) {
        out += i == 0 ? " " : ", ";
        out += scalar_to_string(value.elem_type, value.array[i], max_chars);
    }
    if (shown < value.array.size()) out += shown == 0 ? " ..." : ", ...";
    return out;
}

}  // namespace rebox
