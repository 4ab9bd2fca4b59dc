// The SSE2 lane type: four float lanes (__m128) with the operations the lane kernels use. Every
// operation is one IEEE instruction (addps, divps, sqrtps, ...) or bit logic, never an estimate.
#pragma once

#include <emmintrin.h>

#include <cstdint>

#include "format/half.hpp"

namespace rebox::quant::lanes {
namespace {

struct Sse2 {
    using F = __m128;
    static constexpr int kWidth = 4;
    static constexpr const char* kName = "sse2";

    static F load(const float* p) { return _mm_load_ps(p); }
    static F loadu(const float* p) { return _mm_loadu_ps(p); }
    static void store(float* p, F v) { _mm_store_ps(p, v); }
    static F set1(float v) { return _mm_set1_ps(v); }
    static F zero() { return _mm_setzero_ps(); }
    static F add(F a, F b) { return _mm_add_ps(a, b); }
    static F sub(F a, F b) { return _mm_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm_mul_ps(a, b); }
    static F div(F a, F b) { return _mm_div_ps(a, b); }
    static F sqrt(F a) { return _mm_sqrt_ps(a); }
    // C's `a < b ? a : b` and `a > b ? a : b`, operand order included (NaN picks b).
    static F min(F a, F b) { return _mm_min_ps(a, b); }
    static F max(F a, F b) { return _mm_max_ps(a, b); }
    static F abs(F a) { return _mm_and_ps(a, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff))); }
    static F neg(F a) { return _mm_xor_ps(a, _mm_castsi128_ps(_mm_set1_epi32(INT32_MIN))); }
    // Ordered comparisons: false when either side is NaN, as C's <, >, <=, ==.
    static F lt(F a, F b) { return _mm_cmplt_ps(a, b); }
    static F gt(F a, F b) { return _mm_cmpgt_ps(a, b); }
    static F le(F a, F b) { return _mm_cmple_ps(a, b); }
    static F eq(F a, F b) { return _mm_cmpeq_ps(a, b); }
    static F unordered(F a, F b) { return _mm_cmpunord_ps(a, b); }
    static F and_(F a, F b) { return _mm_and_ps(a, b); }
    static F or_(F a, F b) { return _mm_or_ps(a, b); }
    // mask ? b : a, per lane.
    static F select(F mask, F a, F b) {
        return _mm_or_ps(_mm_and_ps(mask, b), _mm_andnot_ps(mask, a));
    }
    // x < y ? b : a, per lane (one compare and one blend: no mask vector in between).
    static F select_lt(F x, F y, F a, F b) { return select(lt(x, y), a, b); }
    // x <= y ? b : a, per lane.
    static F select_le(F x, F y, F a, F b) { return select(le(x, y), a, b); }
    static F zero_where(F mask, F a) { return _mm_andnot_ps(mask, a); }
    static int any(F mask) { return _mm_movemask_ps(mask); }
    // ggml's nearest_int bit trick, (bits(f + 12582912.f) & 0x7fffff) - 0x400000, as a float
    // (exact: the result is below 2^23 in magnitude).
    static F nearest_int(F f) {
        const __m128i bits = _mm_castps_si128(_mm_add_ps(f, _mm_set1_ps(12582912.f)));
        const __m128i i = _mm_sub_epi32(_mm_and_si128(bits, _mm_set1_epi32(0x007fffff)),
                                        _mm_set1_epi32(0x00400000));
        return _mm_cvtepi32_ps(i);
    }
    // C's (int)f truncation as a float; values are small integers here.
    static F trunc_to_int(F f) { return _mm_cvtepi32_ps(_mm_cvttps_epi32(f)); }
    static float hmax(F v) {  // the largest lane (no NaN lanes: then the order does not matter)
        const F m = _mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
        return _mm_cvtss_f32(_mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1))));
    }
    static float hmin(F v) {  // the smallest lane (no NaN lanes: then the order does not matter)
        const F m = _mm_min_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
        return _mm_cvtss_f32(_mm_min_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1))));
    }
    // Lane k of the result: the smallest (largest) lane of v[k], k < 4 (no NaN lanes: then the
    // order does not matter). A transposing reduction (unpack, min, move, min).
    static F hmin_each(const F* v) { return reduce4<true>(v[0], v[1], v[2], v[3]); }
    static F hmax_each(const F* v) { return reduce4<false>(v[0], v[1], v[2], v[3]); }
    // fp16 bits of each lane (SSE2 has no conversion: the scalar kernels' float_to_half).
    static void store_halves(uint16_t* dst, F v) {
        alignas(16) float f[4];
        _mm_store_ps(f, v);
        for (int k = 0; k < 4; ++k) dst[k] = float_to_half(f[k]);
    }
    // 32 codes from y (element j in lane j % kWidth of y[j / kWidth]): c = (int)y truncated, with
    // limit > 0 c = MIN(limit, c); qs[j] = (c_j & 15) | (c_{j+16} & 15) << 4 and bit j of
    // *bit4 = c_j & 16. A NaN truncates to INT_MIN, whose nibble and bit 4 are 0.
    static void store_nibbles(const F* y, int limit, uint8_t* qs, uint32_t* bit4) {
        __m128i c[8];
        for (int j = 0; j < 8; ++j) {
            c[j] = _mm_cvttps_epi32(y[j]);
            if (limit > 0) {  // SSE2 has no pminsd: a compare and a blend
                const __m128i top = _mm_set1_epi32(limit);
                const __m128i over = _mm_cmpgt_epi32(c[j], top);
                c[j] = _mm_or_si128(_mm_and_si128(over, top), _mm_andnot_si128(over, c[j]));
            }
        }
        const __m128i nibble = _mm_set1_epi32(15);
        __m128i t[4];
        for (int j = 0; j < 4; ++j)
            t[j] = _mm_or_si128(_mm_and_si128(c[j], nibble),
                                _mm_slli_epi32(_mm_and_si128(c[j + 4], nibble), 4));
        _mm_storeu_si128(
            reinterpret_cast<__m128i*>(qs),
            _mm_packus_epi16(_mm_packs_epi32(t[0], t[1]), _mm_packs_epi32(t[2], t[3])));
        uint32_t bits = 0;
        for (int j = 0; j < 8; ++j)
            bits |=
                static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_slli_epi32(c[j], 27))))
                << (4 * j);
        *bit4 = bits;
    }
    // x[i] lane k = src[16 * k + i] for i < 16, k < kWidth: kWidth rows of 16 floats transposed
    // (as transpose_in<V, 16> with every lane used), by shuffles.
    static void transpose16(const float* src, F* x) {
        for (int q = 0; q < 4; ++q) {  // elements 4q..4q+3: a 4 x 4 transpose
            F r0 = _mm_loadu_ps(src + 4 * q), r1 = _mm_loadu_ps(src + 16 + 4 * q);
            F r2 = _mm_loadu_ps(src + 32 + 4 * q), r3 = _mm_loadu_ps(src + 48 + 4 * q);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            x[4 * q] = r0, x[4 * q + 1] = r1, x[4 * q + 2] = r2, x[4 * q + 3] = r3;
        }
    }
    template <bool kMin>
    static F pick(F a, F b) {
        return kMin ? _mm_min_ps(a, b) : _mm_max_ps(a, b);
    }
    template <bool kMin>
    static F reduce4(F a, F b, F c, F d) {
        const F ab = pick<kMin>(_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));  // a02 b02 a13 b13
        const F cd = pick<kMin>(_mm_unpacklo_ps(c, d), _mm_unpackhi_ps(c, d));
        return pick<kMin>(_mm_movelh_ps(ab, cd), _mm_movehl_ps(cd, ab));
    }
    // Bytes (uint8_t)(int)v of nvec vectors (nvec a multiple of 4), as C's float -> integer -> byte
    // conversion: truncate to int32, keep the low byte.
    static void store_bytes(uint8_t* dst, const F* v, int nvec) {
        const __m128i low = _mm_set1_epi32(0xff);
        for (int j = 0; j < nvec; j += 4) {
            const __m128i a = _mm_and_si128(_mm_cvttps_epi32(v[j]), low);
            const __m128i b = _mm_and_si128(_mm_cvttps_epi32(v[j + 1]), low);
            const __m128i c = _mm_and_si128(_mm_cvttps_epi32(v[j + 2]), low);
            const __m128i d = _mm_and_si128(_mm_cvttps_epi32(v[j + 3]), low);
            const __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 4 * j), bytes);
        }
    }
};

}  // namespace
}  // namespace rebox::quant::lanes
