// The AVX2 lane type: eight float lanes (__m256) with the operations the lane kernels use. Only the
// *_avx2.cpp files include it (they alone are compiled with -mavx2, never -mfma). Every operation
// is one IEEE instruction (vaddps, vdivps, vsqrtps, ...) or bit logic, never an estimate.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace rebox::quant::lanes {
namespace {

struct Avx2 {
    using F = __m256;
    static constexpr int kWidth = 8;
    static constexpr const char* kName = "avx2";

    static F load(const float* p) { return _mm256_load_ps(p); }
    static F loadu(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, F v) { _mm256_store_ps(p, v); }
    static F set1(float v) { return _mm256_set1_ps(v); }
    static F zero() { return _mm256_setzero_ps(); }
    static F add(F a, F b) { return _mm256_add_ps(a, b); }
    static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
    static F div(F a, F b) { return _mm256_div_ps(a, b); }
    static F sqrt(F a) { return _mm256_sqrt_ps(a); }
    // C's `a < b ? a : b` and `a > b ? a : b`, operand order included (NaN picks b).
    static F min(F a, F b) { return _mm256_min_ps(a, b); }
    static F max(F a, F b) { return _mm256_max_ps(a, b); }
    static F abs(F a) {
        return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
    }
    static F neg(F a) {
        return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)));
    }
    // Ordered comparisons: false when either side is NaN, as C's <, >, <=, ==.
    static F lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
    static F gt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
    static F le(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
    static F eq(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
    static F unordered(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
    static F and_(F a, F b) { return _mm256_and_ps(a, b); }
    static F or_(F a, F b) { return _mm256_or_ps(a, b); }
    // mask ? b : a, per lane.
    static F select(F mask, F a, F b) { return _mm256_blendv_ps(a, b, mask); }
    // x < y ? b : a, per lane (one compare and one blend: no mask vector in between).
    static F select_lt(F x, F y, F a, F b) {
        return _mm256_blendv_ps(a, b, _mm256_cmp_ps(x, y, _CMP_LT_OQ));
    }
    // x <= y ? b : a, per lane.
    static F select_le(F x, F y, F a, F b) {
        return _mm256_blendv_ps(a, b, _mm256_cmp_ps(x, y, _CMP_LE_OQ));
    }
    static F zero_where(F mask, F a) { return _mm256_andnot_ps(mask, a); }
    static int any(F mask) { return _mm256_movemask_ps(mask); }
    // ggml's nearest_int bit trick, (bits(f + 12582912.f) & 0x7fffff) - 0x400000, as a float
    // (exact: the result is below 2^23 in magnitude).
    static F nearest_int(F f) {
        const __m256i bits = _mm256_castps_si256(_mm256_add_ps(f, _mm256_set1_ps(12582912.f)));
        const __m256i i = _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                                           _mm256_set1_epi32(0x00400000));
        return _mm256_cvtepi32_ps(i);
    }
    // C's (int)f truncation as a float; values are small integers here.
    static F trunc_to_int(F f) { return _mm256_cvtepi32_ps(_mm256_cvttps_epi32(f)); }
    static float hmax(F v) {  // the largest lane (no NaN lanes: then the order does not matter)
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
        return _mm_cvtss_f32(_mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1))));
    }
    static float hmin(F v) {  // the smallest lane (no NaN lanes: then the order does not matter)
        __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        m = _mm_min_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
        return _mm_cvtss_f32(_mm_min_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1))));
    }
    // Lane k of the result: the smallest (largest) lane of v[k], k < 8 (no NaN lanes: then the
    // order does not matter). A transposing reduction: 4 vectors at a time within each 128-bit
    // half (unpack, min, unpack, min), then across the halves.
    static F hmin_each(const F* v) { return reduce_each<true>(v); }
    static F hmax_each(const F* v) { return reduce_each<false>(v); }
    // fp16 bits of each lane, round to nearest even (vcvtps2ph, F16C: binary16 subnormals,
    // overflow to infinity, a NaN kept quiet with its top payload bits, as float_to_half).
    static void store_halves(uint16_t* dst, F v) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                         _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    // 32 codes from y (element j in lane j % kWidth of y[j / kWidth]): c = (int)y truncated, with
    // limit > 0 c = MIN(limit, c); qs[j] = (c_j & 15) | (c_{j+16} & 15) << 4 and bit j of
    // *bit4 = c_j & 16. A NaN truncates to INT_MIN, whose nibble and bit 4 are 0.
    static void store_nibbles(const F* y, int limit, uint8_t* qs, uint32_t* bit4) {
        __m256i c[4];
        for (int j = 0; j < 4; ++j) {
            c[j] = _mm256_cvttps_epi32(y[j]);
            if (limit > 0) c[j] = _mm256_min_epi32(c[j], _mm256_set1_epi32(limit));
        }
        const __m256i nibble = _mm256_set1_epi32(15);
        const __m256i t0 = _mm256_or_si256(_mm256_and_si256(c[0], nibble),
                                           _mm256_slli_epi32(_mm256_and_si256(c[2], nibble), 4));
        const __m256i t1 = _mm256_or_si256(_mm256_and_si256(c[1], nibble),
                                           _mm256_slli_epi32(_mm256_and_si256(c[3], nibble), 4));
        const __m256i words = _mm256_packs_epi32(t0, t1);  // t0 0-3, t1 0-3 | t0 4-7, t1 4-7
        const __m128i bytes =
            _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs),
                         _mm_shuffle_epi32(bytes, _MM_SHUFFLE(3, 1, 2, 0)));
        uint32_t bits = 0;
        for (int j = 0; j < 4; ++j)
            bits |= static_cast<uint32_t>(
                        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(c[j], 27))))
                    << (8 * j);
        *bit4 = bits;
    }
    // x[i] lane k = src[16 * k + i] for i < 16, k < kWidth: kWidth rows of 16 floats transposed
    // (as transpose_in<V, 16> with every lane used), by shuffles.
    static void transpose16(const float* src, F* x) {
        for (int half = 0; half < 2; ++half) {  // elements 0..7, then 8..15: two 8 x 8 transposes
            F r[8], t[8], u[8];
            for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(src + 16 * k + 8 * half);
            for (int k = 0; k < 8; k += 2) {
                t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
                t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
            }
            for (int k = 0; k < 8; k += 4) {
                u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
                u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
                u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
                u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
            }
            F* out = x + 8 * half;
            for (int j = 0; j < 4; ++j) {
                out[j] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x20);
                out[j + 4] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x31);
            }
        }
    }
    template <bool kMin>
    static F pick(F a, F b) {
        return kMin ? _mm256_min_ps(a, b) : _mm256_max_ps(a, b);
    }
    // Per 128-bit half: [a, b, c, d] each reduced over the half's 4 lanes.
    template <bool kMin>
    static F reduce4(F a, F b, F c, F d) {
        const F ab = pick<kMin>(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
        const F cd = pick<kMin>(_mm256_unpacklo_ps(c, d), _mm256_unpackhi_ps(c, d));
        const __m256d abd = _mm256_castps_pd(ab), cdd = _mm256_castps_pd(cd);
        return pick<kMin>(_mm256_castpd_ps(_mm256_unpacklo_pd(abd, cdd)),
                          _mm256_castpd_ps(_mm256_unpackhi_pd(abd, cdd)));
    }
    template <bool kMin>
    static F reduce_each(const F* v) {
        const F p0 = reduce4<kMin>(v[0], v[1], v[2], v[3]);
        const F p1 = reduce4<kMin>(v[4], v[5], v[6], v[7]);
        return pick<kMin>(_mm256_permute2f128_ps(p0, p1, 0x20),
                          _mm256_permute2f128_ps(p0, p1, 0x31));
    }
    // Bytes (uint8_t)(int)v of nvec vectors (nvec even), as C's float -> integer -> byte
    // conversion: truncate to int32, keep the low byte.
    static void store_bytes(uint8_t* dst, const F* v, int nvec) {
        const __m256i low = _mm256_set1_epi32(0xff);
        for (int j = 0; j < nvec; j += 2) {
            const __m256i a = _mm256_and_si256(_mm256_cvttps_epi32(v[j]), low);
            const __m256i b = _mm256_and_si256(_mm256_cvttps_epi32(v[j + 1]), low);
            const __m256i words = _mm256_packs_epi32(a, b);  // a0-3 b0-3 | a4-7 b4-7
            const __m128i bytes =
                _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 8 * j),
                             _mm_shuffle_epi32(bytes, _MM_SHUFFLE(3, 1, 2, 0)));
        }
    }
};

}  // namespace
}  // namespace rebox::quant::lanes
