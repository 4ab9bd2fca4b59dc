// binary16 / bfloat16 widening by field arithmetic: normal numbers re-bias the exponent, subnormals
// are mantissa * 2^-24 (exact in binary32), exponent 31 maps to the float infinity/NaN exponent.
#include "verify/values/ref_half.hpp"

#include <cmath>

namespace rebox::verify_ref {

namespace {

float widen_by_fields(uint16_t half_bits) {
    const uint32_t sign = (half_bits >> 15) & 0x1u;
    const uint32_t exponent = (half_bits >> 10) & 0x1fu;
    const uint32_t mantissa = half_bits & 0x3ffu;
    if (exponent == 0) {
        // Zero or subnormal: mantissa * 2^-24, exact (at most 10 significant bits).
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31) return float_from_bits((sign << 31) | 0x7f800000u | (mantissa << 13));
    return float_from_bits((sign << 31) | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

// The table behind half_bits_to_float (256 KiB): the hot loops widen a scale and a min per block,
// and a branchy call each time cost ~10% of verify's time.
struct HalfTableFiller {
    HalfTableFiller() {
        for (uint32_t h = 0; h < 65536; ++h)
            detail::half_to_float_table[h] = widen_by_fields(static_cast<uint16_t>(h));
    }
};
const HalfTableFiller fill_half_table;

}  // namespace

namespace detail {
float half_to_float_table[65536];
}  // namespace detail

float bf16_bits_to_float(uint16_t bf16_bits) {
    return float_from_bits(static_cast<uint32_t>(bf16_bits) << 16);
}

}  // namespace rebox::verify_ref
