// The AVX-512 lane type: sixteen float lanes (__m512) with the operations the lane kernels use.
// Only the *_avx512.cpp files include it (compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl;
// the project-wide -ffp-contract=off keeps FMA out although those flags allow it). Every operation
// is one IEEE instruction (vaddps, vdivps, vsqrtps, ...) or bit logic, never an estimate (no rcp14
// / rsqrt14). Masks are kept as vectors (all ones or all zeros per lane) like the SSE2 / AVX2
// types, so the kernels stay one template; compares go through a k-register and back (vpmovm2d).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace rebox::quant::lanes {
namespace {

struct Avx512 {
    using F = __m512;
    static constexpr int kWidth = 16;
    static constexpr const char* kName = "avx512";

    // Unaligned loads and stores: the kernels' stack buffers are 32-byte aligned, and on these
    // CPUs an unaligned access to aligned data costs nothing.
    static F load(const float* p) { return _mm512_loadu_ps(p); }
    static F loadu(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
    static F set1(float v) { return _mm512_set1_ps(v); }
    static F zero() { return _mm512_setzero_ps(); }
    static F add(F a, F b) { return _mm512_add_ps(a, b); }
    static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
    static F div(F a, F b) { return _mm512_div_ps(a, b); }
    static F sqrt(F a) { return _mm512_sqrt_ps(a); }
    // C's `a < b ? a : b` and `a > b ? a : b`, operand order included (NaN picks b), as vminps.
    static F min(F a, F b) { return _mm512_min_ps(a, b); }
    static F max(F a, F b) { return _mm512_max_ps(a, b); }
    static F abs(F a) {
        return _mm512_and_ps(a, _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff)));
    }
    static F neg(F a) {
        return _mm512_xor_ps(a, _mm512_castsi512_ps(_mm512_set1_epi32(INT32_MIN)));
    }
    static F mask_vector(__mmask16 k) { return _mm512_castsi512_ps(_mm512_movm_epi32(k)); }
    static __mmask16 mask_bits(F mask) { return _mm512_movepi32_mask(_mm512_castps_si512(mask)); }
    // Ordered comparisons: false when either side is NaN, as C's <, >, <=, ==.
    static F lt(F a, F b) { return mask_vector(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)); }
    static F gt(F a, F b) { return mask_vector(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)); }
    static F le(F a, F b) { return mask_vector(_mm512_cmp_ps_mask(a, b, _CMP_LE_OQ)); }
    static F eq(F a, F b) { return mask_vector(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ)); }
    static F unordered(F a, F b) { return mask_vector(_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q)); }
    static F and_(F a, F b) { return _mm512_and_ps(a, b); }
    static F or_(F a, F b) { return _mm512_or_ps(a, b); }
    // mask ? b : a, per lane (the mask's sign bit, as vblendvps).
    static F select(F mask, F a, F b) { return _mm512_mask_blend_ps(mask_bits(mask), a, b); }
    // x < y ? b : a, per lane (one compare and one blend: no mask vector in between).
    static F select_lt(F x, F y, F a, F b) {
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, y, _CMP_LT_OQ), a, b);
    }
    // x <= y ? b : a, per lane.
    static F select_le(F x, F y, F a, F b) {
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, y, _CMP_LE_OQ), a, b);
    }
    static F zero_where(F mask, F a) { return _mm512_andnot_ps(mask, a); }
    static int any(F mask) { return mask_bits(mask); }
    // ggml's nearest_int bit trick, (bits(f + 12582912.f) & 0x7fffff) - 0x400000, as a float
    // (exact: the result is below 2^23 in magnitude).
    static F nearest_int(F f) {
        const __m512i bits = _mm512_castps_si512(_mm512_add_ps(f, _mm512_set1_ps(12582912.f)));
        const __m512i i = _mm512_sub_epi32(_mm512_and_si512(bits, _mm512_set1_epi32(0x007fffff)),
                                           _mm512_set1_epi32(0x00400000));
        return _mm512_cvtepi32_ps(i);
    }
    // C's (int)f truncation as a float; values are small integers here.
    static F trunc_to_int(F f) { return _mm512_cvtepi32_ps(_mm512_cvttps_epi32(f)); }
    static float hmax(F v) {  // the largest lane (no NaN lanes: then the order does not matter)
        __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
        m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
        return _mm_cvtss_f32(_mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1))));
    }
    static float hmin(F v) {  // the smallest lane (no NaN lanes: then the order does not matter)
        __m256 h = _mm256_min_ps(_mm512_castps512_ps256(v),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        __m128 m = _mm_min_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
        m = _mm_min_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
        return _mm_cvtss_f32(_mm_min_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1))));
    }
    // Lane k of the result: the smallest (largest) lane of v[k], k < 16 (no NaN lanes: then the
    // order does not matter). A transposing reduction: 4 vectors at a time within each 128-bit
    // chunk (unpack, min, unpack, min), then across the chunks (vshuff32x4).
    static F hmin_each(const F* v) { return reduce_each<true>(v); }
    static F hmax_each(const F* v) { return reduce_each<false>(v); }
    // fp16 bits of each lane, round to nearest even (vcvtps2ph: binary16 subnormals, overflow to
    // infinity, a NaN kept quiet with its top payload bits, as float_to_half).
    static void store_halves(uint16_t* dst, F v) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst),
                            _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    // 32 codes from y (element j in lane j % kWidth of y[j / kWidth]): c = (int)y truncated, with
    // limit > 0 c = MIN(limit, c); qs[j] = (c_j & 15) | (c_{j+16} & 15) << 4 and bit j of
    // *bit4 = c_j & 16. A NaN truncates to INT_MIN, whose nibble and bit 4 are 0.
    static void store_nibbles(const F* y, int limit, uint8_t* qs, uint32_t* bit4) {
        __m512i a = _mm512_cvttps_epi32(y[0]), b = _mm512_cvttps_epi32(y[1]);
        if (limit > 0) {
            a = _mm512_min_epi32(a, _mm512_set1_epi32(limit));
            b = _mm512_min_epi32(b, _mm512_set1_epi32(limit));
        }
        const __m512i nibble = _mm512_set1_epi32(15);
        const __m512i t = _mm512_or_si512(_mm512_and_si512(a, nibble),
                                          _mm512_slli_epi32(_mm512_and_si512(b, nibble), 4));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(t));
        const __m512i sixteen = _mm512_set1_epi32(16);
        *bit4 = static_cast<uint32_t>(_mm512_test_epi32_mask(a, sixteen)) |
                static_cast<uint32_t>(_mm512_test_epi32_mask(b, sixteen)) << 16;
    }
    // x[i] lane k = src[16 * k + i] for i < 16, k < kWidth: kWidth rows of 16 floats transposed
    // (as transpose_in<V, 16> with every lane used), by shuffles.
    static void transpose16(const float* src, F* x) {
        // Four rounds of interleaving row r with row r + 8 (a perfect shuffle) transpose 16 x 16.
        const __m512i lo =
            _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        const __m512i hi =
            _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
        F r[16], t[16];
        for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(src + 16 * k);
        for (int round = 0; round < 4; ++round) {
            for (int k = 0; k < 8; ++k) {
                t[2 * k] = _mm512_permutex2var_ps(r[k], lo, r[k + 8]);
                t[2 * k + 1] = _mm512_permutex2var_ps(r[k], hi, r[k + 8]);
            }
            for (int k = 0; k < 16; ++k) r[k] = t[k];
        }
        for (int i = 0; i < 16; ++i) x[i] = r[i];
    }
    template <bool kMin>
    static F pick(F a, F b) {
        return kMin ? _mm512_min_ps(a, b) : _mm512_max_ps(a, b);
    }
    // Per 128-bit chunk: [a, b, c, d] each reduced over the chunk's 4 lanes.
    template <bool kMin>
    static F reduce4(F a, F b, F c, F d) {
        const F ab = pick<kMin>(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
        const F cd = pick<kMin>(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
        const __m512d abd = _mm512_castps_pd(ab), cdd = _mm512_castps_pd(cd);
        return pick<kMin>(_mm512_castpd_ps(_mm512_unpacklo_pd(abd, cdd)),
                          _mm512_castpd_ps(_mm512_unpackhi_pd(abd, cdd)));
    }
    // Chunks [p0 c0 op c1, p0 c2 op c3, p1 c0 op c1, p1 c2 op c3].
    template <bool kMin>
    static F reduce_chunks(F p0, F p1) {
        return pick<kMin>(_mm512_shuffle_f32x4(p0, p1, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_f32x4(p0, p1, _MM_SHUFFLE(3, 1, 3, 1)));
    }
    template <bool kMin>
    static F reduce_each(const F* v) {
        const F p0 = reduce4<kMin>(v[0], v[1], v[2], v[3]);
        const F p1 = reduce4<kMin>(v[4], v[5], v[6], v[7]);
        const F p2 = reduce4<kMin>(v[8], v[9], v[10], v[11]);
        const F p3 = reduce4<kMin>(v[12], v[13], v[14], v[15]);
        return reduce_chunks<kMin>(reduce_chunks<kMin>(p0, p1), reduce_chunks<kMin>(p2, p3));
    }
    // Bytes (uint8_t)(int)v of nvec vectors, as C's float -> integer -> byte conversion: truncate
    // to int32, keep the low byte (vpmovdb truncates).
    static void store_bytes(uint8_t* dst, const F* v, int nvec) {
        for (int j = 0; j < nvec; ++j)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16 * j),
                             _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v[j])));
    }
};

}  // namespace
}  // namespace rebox::quant::lanes
