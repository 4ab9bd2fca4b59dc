// GGUF metadata values: the 13 on-disk value types and a typed value holding a scalar or an array.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rebox {

enum class GgufType : uint32_t {
    UINT8 = 0,
    INT8 = 1,
    UINT16 = 2,
    INT16 = 3,
    UINT32 = 4,
    INT32 = 5,
    FLOAT32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    UINT64 = 10,
    INT64 = 11,
    FLOAT64 = 12,
};
inline constexpr uint32_t kGgufTypeCount = 13;

std::string_view gguf_type_name(GgufType type);  // "UINT32", ...
size_t gguf_scalar_size(GgufType type);          // 0 for STRING/ARRAY

// Unsigned kinds are held as uint64_t, signed as int64_t, FLOAT32/FLOAT64 as double (exact).
using GgufScalar = std::variant<uint64_t, int64_t, double, bool, std::string>;

struct GgufValue {
    GgufType type = GgufType::UINT32;
    GgufType elem_type = GgufType::UINT32;  // meaningful for ARRAY only
    GgufScalar scalar;                      // for non-arrays
    std::vector<GgufScalar> array;          // for ARRAY

    static GgufValue u8(uint8_t v);
    static GgufValue u16(uint16_t v);
    static GgufValue u32(uint32_t v);
    static GgufValue u64(uint64_t v);
    static GgufValue i32(int32_t v);
    static GgufValue i64(int64_t v);
    static GgufValue f32(float v);
    static GgufValue f64(double v);
    static GgufValue boolean(bool v);
    static GgufValue str(std::string v);
    static GgufValue string_array(std::vector<std::string> v);
    static GgufValue i32_array(const std::vector<int32_t>& v);
    static GgufValue f32_array(const std::vector<float>& v);
    static GgufValue array_of(GgufType elem_type, std::vector<GgufScalar> items);

    bool is_array() const { return type == GgufType::ARRAY; }
    // Typed accessors: nullopt when the stored type is not the one named (strict, as llama.cpp).
    std::optional<uint32_t> as_u32() const;
    std::optional<uint16_t> as_u16() const;
    std::optional<int32_t> as_i32() const;
    std::optional<float> as_f32() const;
    std::optional<bool> as_bool() const;
    const std::string* as_string() const;
    // Any integer kind as int64 (nullopt for non-integers or uint64 > INT64_MAX).
    std::optional<int64_t> as_integer() const;

    bool operator==(const GgufValue& other) const = default;
};

struct GgufKV {
    std::string key;
    GgufValue value;
    bool operator==(const GgufKV& other) const = default;
};

// Short human rendering: scalars in full (strings single-quoted, cut at max_chars), arrays as
// "[STRING] x151669: 'a', 'b', ..." (first max_items items).
std::string gguf_value_to_string(const GgufValue& value, size_t max_chars = 60,
                                 size_t max_items = 6);

}  // namespace rebox
