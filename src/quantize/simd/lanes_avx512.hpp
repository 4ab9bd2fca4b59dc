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
