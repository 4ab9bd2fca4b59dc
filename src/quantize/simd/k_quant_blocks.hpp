// Scalar pieces the K-quant lane kernels share: fp16 storage of d/dmin, the 2-bit code packing of
// Q2_K/Q3_K, the 6-bit scale packing of Q4_K/Q5_K (ggml's get_scale_min_k4 and its inverse) and
// ggml's make_qp_quants (the scalar kernels' own, for the 8 or 16 sub-block scales of an imatrix
// super-block: too small a loop to be worth lanes).
#pragma once

#include <emmintrin.h>

#include <cstdint>
#include <cstring>

#include "format/half.hpp"
#include "quantize/scale_search.hpp"

namespace rebox::quant::lanes {
namespace {

inline int nearest_int_scalar(float f) {
    const float v = f + 12582912.f;
    int32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

inline void store_half(uint8_t* dst, float value) {
    const uint16_t h = float_to_half(value);
    dst[0] = static_cast<uint8_t>(h & 0xff);
    dst[1] = static_cast<uint8_t>(h >> 8);
}

inline float load_half(const uint8_t* src) {
    return half_to_float(static_cast<uint16_t>(src[0] | (src[1] << 8)));
}

// Sub-block j's 6-bit scale ls and min lm into Q4_K/Q5_K's scales[12].
inline void pack_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t* scales) {
    if (j < 4) {
        scales[j] = ls;
        scales[j + 4] = lm;
    } else {
        scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
        scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
        scales[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
}

inline void unpack_scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Q2_K's and Q3_K's 2-bit codes: per 128-value half j, qs[j/4 + l] holds codes j+l, j+l+32, j+l+64
// and j+l+96 at bits 0, 2, 4, 6. SSE2 (the x86-64 baseline), 16 bytes at a time: the codes are
// below 4 (the searches clamp them), so shifting 16-bit words by 2, 4 or 6 keeps each code in its
// own byte.
inline void pack_2bit_codes(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < 256; j += 128)
        for (int l = 0; l < 32; l += 16) {
            const uint8_t* c = L + j + l;
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 32));
            const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 64));
            const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 96));
            const __m128i packed =
                _mm_or_si128(_mm_or_si128(a, _mm_slli_epi16(b, 2)),
                             _mm_or_si128(_mm_slli_epi16(d, 4), _mm_slli_epi16(e, 6)));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + j / 4 + l), packed);
        }
}

// ggml's make_qp_quants: the scalar kernels' one (scale_search.cpp, built without -mavx2), called
// out of line so the AVX2 translation unit compiles no copy of it.
inline float make_qp_quants_scalar(int n, int nmax, const float* x, uint8_t* L, const float* qw) {
    return quant::make_qp_quants(n, nmax, x, L, qw);
}

}  // namespace
}  // namespace rebox::quant::lanes
