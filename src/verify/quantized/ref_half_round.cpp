// binary32 -> binary16 by integer field arithmetic: the 13 (normal) or more (subnormal) dropped
// mantissa bits decide the rounding, a carry out of the mantissa bumps the exponent (up to inf).
#include "verify/quantized/ref_half_round.hpp"

#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {

namespace {

// Rounds `kept` (the magnitude's bits above `dropped_bits`) to nearest, ties to even.
uint32_t round_dropped(uint32_t magnitude, uint32_t dropped_bits) {
    const uint32_t kept = magnitude >> dropped_bits;
    const uint32_t rest = magnitude & ((1u << dropped_bits) - 1u);
    const uint32_t half_way = 1u << (dropped_bits - 1u);
    if (rest > half_way || (rest == half_way && (kept & 1u))) return kept + 1u;
    return kept;
}

}  // namespace

uint16_t float_to_half_bits(float value) {
    const uint32_t bits = float_bits(value);
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return sign | 0x7e00u;  // NaN
    // 65520 (0x477ff000) is half way between 65504, the largest half, and 65536: it and everything
    // above round to infinity (65504's mantissa is odd, so the tie goes up).
    if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
    const uint32_t exponent = magnitude >> 23;  // biased binary32 exponent
    if (exponent >= 113) {                      // 2^-14 and up: a normal half
        // Re-bias (127 -> 15) in place and drop 13 mantissa bits; a carry may reach the exponent.
        const uint32_t rebiased = magnitude - ((127u - 15u) << 23);
        return sign | static_cast<uint16_t>(round_dropped(rebiased, 13));
    }
    if (exponent < 102) return sign;  // below 2^-25: rounds to (signed) zero
    // Subnormal half: the value in units of 2^-24 is significand * 2^(exponent - 126).
    const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    return sign | static_cast<uint16_t>(round_dropped(significand, 126u - exponent));
}

}  // namespace rebox::verify_ref
