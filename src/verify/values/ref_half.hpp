// verify's own binary16 / bfloat16 -> binary32 widening, written independently of format/half.hpp
// so the proof does not trust the converter's conversion helpers. Widening is always exact.
#pragma once

#include <cstdint>
#include <cstring>

namespace rebox::verify_ref {

namespace detail {
// All 65536 widened values, filled before main() from the field arithmetic in ref_half.cpp.
extern float half_to_float_table[65536];
}  // namespace detail

// IEEE binary16 bits -> binary32 (subnormals, signed zeros, infinities and NaN payloads kept).
inline float half_bits_to_float(uint16_t half_bits) {
    return detail::half_to_float_table[half_bits];
}
// bfloat16 bits -> binary32 (the upper 16 bits of the float).
float bf16_bits_to_float(uint16_t bf16_bits);

inline uint32_t float_bits(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

inline float float_from_bits(uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

// Little-endian 16-bit load from an unaligned byte pointer.
inline uint16_t load_u16le(const uint8_t* bytes) {
    return static_cast<uint16_t>(bytes[0] | (bytes[1] << 8));
}

inline uint32_t load_u32le(const uint8_t* bytes) {
    return static_cast<uint32_t>(bytes[0]) | (static_cast<uint32_t>(bytes[1]) << 8) |
           (static_cast<uint32_t>(bytes[2]) << 16) | (static_cast<uint32_t>(bytes[3]) << 24);
}

}  // namespace rebox::verify_ref
