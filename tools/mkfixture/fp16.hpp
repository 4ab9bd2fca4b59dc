// IEEE-754 binary16 <-> binary32 for the fixture generator, written out here (round to nearest,
// ties to even) so the fixtures do not depend on rebox's own conversion code.
#pragma once

#include <bit>
#include <cstdint>

namespace mkfixture {

inline uint16_t float_to_half(float value) {
    const uint32_t x = std::bit_cast<uint32_t>(value);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t exponent = (x >> 23) & 0xffu;
    uint32_t mantissa = x & 0x7fffffu;
    if (exponent == 0xff) return sign | 0x7c00u | (mantissa ? 0x200u : 0u);  // inf / NaN
    const int half_exponent = static_cast<int>(exponent) - 127 + 15;
    if (half_exponent >= 31) return sign | 0x7c00u;  // overflow -> inf
    if (half_exponent <= 0) {                        // half subnormal or zero
        if (half_exponent < -10) return sign;        // below half of the smallest subnormal
        mantissa |= 0x800000u;                       // value = mantissa * 2^(exponent-150)
        const int shift = 14 - half_exponent;        // subnormal units of 2^-24
        uint32_t result = mantissa >> shift;
        const uint32_t rest = mantissa & ((1u << shift) - 1u);
        const uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (result & 1u))) ++result;
        return sign | static_cast<uint16_t>(result);
    }
    uint32_t result = (static_cast<uint32_t>(half_exponent) << 10) | (mantissa >> 13);
    const uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;  // carry may reach inf
    return sign | static_cast<uint16_t>(result);
}

inline float half_to_float(uint16_t half) {
    const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
    const uint32_t exponent = (half >> 10) & 0x1fu;
    const uint32_t mantissa = half & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in binary32
        const float magnitude = static_cast<float>(mantissa) * 0x1.0p-24f;
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace mkfixture
