// binary16 / bfloat16 <-> binary32 by bit manipulation (no hardware F16C, no FPU rounding modes):
// widening is exact, narrowing rounds to nearest, ties to even.
#include "format/half.hpp"

#include <bit>

#include "format/half_exact.hpp"

namespace rebox {

namespace {

constexpr uint32_t kF32AbsMask = 0x7fffffffu;
constexpr uint32_t kF32Inf = 0x7f800000u;
// |f| >= 65520 (half-way between 65504 and 2^16; the tie goes to the even neighbour, infinity).
constexpr uint32_t kF32HalfOverflow = 0x477ff000u;
constexpr uint32_t kF32HalfMinNormal = 0x38800000u;         // 2^-14
constexpr uint32_t kF32HalfMinSubnormalHalf = 0x33000000u;  // 2^-25: at or below rounds to zero

}  // namespace

float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {
        // Zero or subnormal: mantissa * 2^-24, exact in binary32.
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
        return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | sign);
    }
    if (exponent == 0x1f) return std::bit_cast<float>(sign | kF32Inf | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t float_to_half(float f) {
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & kF32AbsMask;
    if (abs > kF32Inf) {
        // NaN: keep the top payload bits, force quiet so the result cannot become infinity.
        return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
    }
    if (abs >= kF32HalfOverflow) return static_cast<uint16_t>(sign | 0x7c00u);
    if (abs < kF32HalfMinNormal) {
        if (abs <= kF32HalfMinSubnormalHalf) return sign;
        // Result is mantissa24 * 2^(e-126) in units of 2^-24; shift right by 126-e with RNE.
        const uint32_t exponent = abs >> 23;
        const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - exponent;  // 14..24 here
        const uint32_t halfway = 1u << (shift - 1);
        const uint32_t remainder = mantissa & ((1u << shift) - 1);
        uint32_t result = mantissa >> shift;
        if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
        return static_cast<uint16_t>(sign | result);  // a carry to 0x400 is the smallest normal
    }
    // Normal: rebias the exponent (127 -> 15) and drop 13 mantissa bits with RNE; a carry
    // propagates into the exponent, which is correct (and cannot reach infinity here).
    uint32_t result = (abs - (112u << 23)) >> 13;
    const uint32_t remainder = abs & 0x1fffu;
    if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
}

float bf16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bf16(float f) {
    // ggml_compute_fp32_to_bf16 (ggml-impl.h).
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & kF32AbsMask) > kF32Inf) return static_cast<uint16_t>((bits >> 16) | 64u);
    return static_cast<uint16_t>((bits + (0x7fffu + ((bits >> 16) & 1u))) >> 16);
}

bool float_to_half_exact(float f, uint16_t* out) {
    return half_exact_bits(std::bit_cast<uint32_t>(f), out);
}

bool float_to_bf16_exact(float f, uint16_t* out) {
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & kF32AbsMask) > kF32Inf || (bits & 0xffffu) != 0) return false;
    if (out != nullptr) *out = static_cast<uint16_t>(bits >> 16);
    return true;
}

}  // namespace rebox
