// The SSE2 lane type: four float lanes (__m128) with the operations the lane kernels use. Every
// operation is one IEEE instruction (addps, divps, sqrtps, ...) or bit logic, never an estimate.
#pragma once

#include <emmintrin.h>

#include <cstdint>

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
