// The scalar primitives every quantizer shares, with ggml's exact semantics: nearest_int's
// 1.5*2^23 bit trick, ggml's software fp32<->fp16 (round to nearest even, NaN -> sign|0x7E00),
// the E8M0 scale of MXFP4, x86's float->int truncation (cvttss2si) and little-endian stores.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace rebox::quant {

inline constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS

// Round half to even by adding 1.5*2^23 and reading the mantissa: ggml's nearest_int, exact for
// |f| <= 4194303; outside that range (and for inf/NaN) it returns the same garbage ggml does.
inline int nearest_int(float f) {
    const float biased = f + 12582912.f;
    const int32_t bits = std::bit_cast<int32_t>(biased);
    return (bits & 0x007fffff) - 0x00400000;
}

// What a C cast float -> int32 compiles to on x86-64 (cvttss2si): truncation toward zero, and
// INT32_MIN for NaN and for values outside int32. ggml's (int8_t)/(uint8_t) casts of floats are
// this followed by keeping the low byte; the C++ cast would be undefined outside the range.
inline int32_t truncate_like_x86(float f) {
    if (!(f > -2147483904.f && f < 2147483648.f)) return INT32_MIN;
    return static_cast<int32_t>(f);
}

// ggml_compute_fp32_to_fp16: scale by 2^112 then 2^-110 to round into the half range, add a
// magic exponent bias so the FPU rounds the mantissa (to nearest even, subnormals included).
inline uint16_t fp32_to_fp16(float f) {
    const float scaled =
        (std::bit_cast<float>(std::bit_cast<uint32_t>(f) & 0x7fffffffu) * 0x1.0p+112f) *
        0x1.0p-110f;
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    const uint32_t shifted = bits + bits;
    const uint32_t sign = bits & 0x80000000u;
    uint32_t bias = shifted & 0xff000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    const float rounded = std::bit_cast<float>((bias >> 1) + 0x07800000u) + scaled;
    const uint32_t rounded_bits = std::bit_cast<uint32_t>(rounded);
    const uint32_t exponent_bits = (rounded_bits >> 13) & 0x00007c00u;
    const uint32_t mantissa_bits = rounded_bits & 0x00000fffu;
    const uint32_t nonsign = exponent_bits + mantissa_bits;
    return static_cast<uint16_t>((sign >> 16) | (shifted > 0xff000000u ? 0x7e00u : nonsign));
}

// ggml_compute_fp16_to_fp32: exact for every finite half; a NaN comes back quiet (the multiply
// by 2^-112 quiets a signalling payload), as ggml's.
inline float fp16_to_fp32(uint16_t h) {
    const uint32_t widened = static_cast<uint32_t>(h) << 16;
    const uint32_t sign = widened & 0x80000000u;
    const uint32_t doubled = widened + widened;
    const float normalized = std::bit_cast<float>((doubled >> 4) + (0xe0u << 23)) * 0x1.0p-112f;
    const float denormalized = std::bit_cast<float>((doubled >> 17) | (126u << 23)) - 0.5f;
    const uint32_t magnitude = doubled < (1u << 27) ? std::bit_cast<uint32_t>(denormalized)
                                                    : std::bit_cast<uint32_t>(normalized);
    return std::bit_cast<float>(sign | magnitude);
}

// ggml_e8m0_to_fp32_half: 2^(e-128), i.e. half the E8M0 scale (kvalues_mxfp4 are doubled).
inline float e8m0_to_fp32_half(uint8_t e) {
    const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
    return std::bit_cast<float>(bits);
}

// ggml_ue4m3_to_fp32: an unsigned E4M3 scale (bias 7, subnormal below exponent 1; bit 7 ignored),
// halved because kvalues_mxfp4 are doubled; 0 and 0x7F (E4M3's NaN) give 0.
inline float ue4m3_to_fp32_half(uint8_t x) {
    if (x == 0 || x == 0x7f) return 0.0f;
    const int exponent = (x >> 3) & 0xf;
    const int mantissa = x & 0x7;
    const float raw = exponent == 0
                          ? std::ldexp(static_cast<float>(mantissa), -9)
                          : std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
    return raw * 0.5f;
}

// ggml_fp32_to_ue4m3: an NVFP4 sub-block scale, rounded on the fp32 mantissa's fourth bit (a
// carry into the exponent allowed), clamped to 448 (0x7E); x * 2^9 rounded half up below 2^-6
// (UE4M3's subnormals, 1..7), 0 for x <= 0, NaN or a value under half the smallest subnormal.
inline uint8_t fp32_to_ue4m3(float x) {
    if (!(x > 0.0f)) return 0;
    if (x > 448.0f) x = 448.0f;
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 7;
    if (exponent <= 0) {
        const auto mantissa = static_cast<int>(x * 512.0f + 0.5f);
        return static_cast<uint8_t>(mantissa > 7 ? 7 : mantissa < 1 ? 0 : mantissa);
    }
    if (exponent >= 15) return 0x7e;
    int mantissa = static_cast<int>((bits >> 20) & 0x7) + static_cast<int>((bits >> 19) & 1);
    if (mantissa > 7) {
        mantissa = 0;
        if (++exponent >= 15) return 0x7e;
    }
    return static_cast<uint8_t>((exponent << 3) | mantissa);
}

inline void store_fp16(uint8_t* out, float f) {
    const uint16_t h = fp32_to_fp16(f);
    out[0] = static_cast<uint8_t>(h & 0xff);
    out[1] = static_cast<uint8_t>(h >> 8);
}

inline uint16_t load_u16(const uint8_t* in) {
    return static_cast<uint16_t>(in[0] | (static_cast<unsigned>(in[1]) << 8));
}

inline float load_fp16(const uint8_t* in) { return fp16_to_fp32(load_u16(in)); }

inline void store_u32(uint8_t* out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

inline uint32_t load_u32(const uint8_t* in) {
    return static_cast<uint32_t>(in[0]) | (static_cast<uint32_t>(in[1]) << 8) |
           (static_cast<uint32_t>(in[2]) << 16) | (static_cast<uint32_t>(in[3]) << 24);
}

}  // namespace rebox::quant
