// Exact binary32 -> binary16 narrowing by bits, inline: the scale and min checks of BF16/F32
// parameter arrays run once per quantization group (millions per model), where a call that
// rounds and widens back to compare cost most of an MLX checkpoint's encode.
#pragma once

#include <cstdint>

namespace rebox {

// True when the binary32 `bits` is exactly a binary16 (then *out holds it; out may be null): zero
// and infinity; a binary16 normal (2^-14 <= |f| < 2^16) whose low 13 mantissa bits are zero; a
// binary16 subnormal (2^-24 <= |f| < 2^-14) whose 24-bit significand is a whole number of 2^-24
// units. NaN never is.
inline bool half_exact_bits(uint32_t bits, uint16_t* out) {
    const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & 0x7fffffffu;
    const uint32_t exponent = abs >> 23, mantissa = abs & 0x7fffffu;
    uint16_t h;
    if (exponent - 113u <= 142u - 113u) {  // 2^-14 .. 2^15: the common case first
        if ((mantissa & 0x1fffu) != 0) return false;
        h = static_cast<uint16_t>(sign | ((abs - (112u << 23)) >> 13));
    } else if (abs == 0) {
        h = sign;
    } else if (abs == 0x7f800000u) {
        h = static_cast<uint16_t>(sign | 0x7c00u);
    } else if (exponent - 103u <= 112u - 103u) {  // 2^-24 .. 2^-15
        const uint32_t significand = mantissa | 0x800000u;
        const uint32_t shift = 126u - exponent;  // 14..23
        if ((significand & ((1u << shift) - 1)) != 0) return false;
        h = static_cast<uint16_t>(sign | (significand >> shift));
    } else {
        return false;  // NaN, too large, too small, or a binary32 subnormal
    }
    if (out != nullptr) *out = h;
    return true;
}

// A bfloat16 (the top half of a binary32) exactly as binary16.
inline bool bf16_half_exact(uint16_t bf16, uint16_t* out) {
    return half_exact_bits(static_cast<uint32_t>(bf16) << 16, out);
}

}  // namespace rebox
