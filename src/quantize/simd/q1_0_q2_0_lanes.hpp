// Q1_0 and Q2_0 in lanes (ggml's quantize_row_q1_0_ref / quantize_row_q2_0_ref; with an imatrix
// ggml runs the same reference row by row, so the blocks are the same and the imatrix is unused).
//
// Q1_0: d = (sum of |x| over 128 values, in index order) / 128. That sum is a sequence, so the
// lanes are W consecutive blocks (transposed), each lane adding its own block's values in order;
// a NaN propagates through the sum as in ggml. The sign bits (x >= 0, false for NaN) are an
// ordered compare per element whose mask bits are the bytes.
// Q2_0: d = amax over 64 values (`a > amax` skips a NaN: maxps with the accumulator second),
// code = (int)roundf(x * id) + 1 clamped to 0..3. roundf is half away from zero from the
// truncation (the remainder is exact); a value that C's (int) cannot convert (NaN, |v| >= 2^31:
// x86 gives INT32_MIN) clamps to 0, as in ggml. Four codes per byte, value 4j + k at bits 2k.
#pragma once

#include <emmintrin.h>

#include <cstdint>
#include <cstring>

#include "quantize/block_kernels.hpp"
#include "quantize/simd/lane_search.hpp"

namespace rebox::quant::lanes {
namespace {

template <class V>
void q1_0_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float*) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kBlockBytes = 18;  // d, qs[16]
    const int64_t nblocks = nrows * (n_per_row / 128);
    for (int64_t b0 = 0; b0 < nblocks; b0 += W) {
        const int lanes = static_cast<int>(nblocks - b0 < W ? nblocks - b0 : W);
        F xt[128];
        transpose_in<V, 128>(src + 128 * b0, lanes, xt);
        F sum = V::zero();
        for (int j = 0; j < 128; ++j) sum = V::add(sum, V::abs(xt[j]));
        alignas(64) float d[W];
        V::store(d, V::div(sum, V::set1(128.f)));
        for (int k = 0; k < lanes; ++k) store_ggml_fp16(dst + kBlockBytes * (b0 + k), d[k]);
    }
    const F zero = V::zero();
    for (int64_t b = 0; b < nblocks; ++b) {
        const float* x = src + 128 * b;
        uint64_t bits[2] = {0, 0};
        for (int j = 0; j < 128 / W; ++j) {
            const int at = W * j;  // bit `at` of the 128: value x[at]
            const uint64_t m = static_cast<uint32_t>(V::any(V::le(zero, V::loadu(x + at))));
            bits[at / 64] |= m << (at % 64);
        }
        std::memcpy(dst + kBlockBytes * b + 2, bits, 16);  // little-endian: bit j of byte j / 8
    }
}

// C's (int)roundf(v) + 1 clamped to 0..3 (as a float), for every v.
template <class V>
typename V::F q2_0_code(typename V::F v) {
    using F = typename V::F;
    const F one = V::set1(1.f);
    F t = V::trunc_to_int(v);
    const F r = V::sub(v, t);
    t = V::add(t, V::and_(V::le(V::set1(0.5f), r), one));
    t = V::sub(t, V::and_(V::le(r, V::set1(-0.5f)), one));
    const F q = V::min(V::max(V::add(t, one), V::zero()), V::set1(3.f));
    return V::select(V::lt(V::abs(v), V::set1(2147483648.f)), V::zero(), q);
}

template <class V>
void q2_0_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float*) {
    using F = typename V::F;
    constexpr int kVecs = 64 / V::kWidth;
    constexpr int kBlockBytes = 18;  // d, qs[16]
    const int64_t nblocks = nrows * (n_per_row / 64);
    for (int64_t b = 0; b < nblocks; ++b) {
        const float* x = src + 64 * b;
        uint8_t* block = dst + kBlockBytes * b;
        F v[kVecs];
        F amax_lanes = V::zero();
        for (int j = 0; j < kVecs; ++j) {
            v[j] = V::loadu(x + V::kWidth * j);
            amax_lanes = V::max(V::abs(v[j]), amax_lanes);  // a NaN lane keeps the old value
        }
        const float d = V::hmax(amax_lanes);
        const float id = d > 0.0f ? 1.0f / d : 0.0f;
        store_ggml_fp16(block, d);
        const F idv = V::set1(id);
        F codes[kVecs];
        for (int j = 0; j < kVecs; ++j) codes[j] = q2_0_code<V>(V::mul(v[j], idv));
        alignas(16) uint8_t c[64];
        V::store_bytes(c, codes, kVecs);
        // Codes 4j..4j+3 are bytes 0..3 of 32-bit word j (each below 4); w | w >> 6 | w >> 12 |
        // w >> 18 moves them to bits 0, 2, 4, 6 of its low byte, then the words pack to bytes.
        __m128i words[4];
        for (int k = 0; k < 4; ++k) {
            const __m128i w = _mm_load_si128(reinterpret_cast<const __m128i*>(c + 16 * k));
            const __m128i packed =
                _mm_or_si128(_mm_or_si128(w, _mm_srli_epi32(w, 6)),
                             _mm_or_si128(_mm_srli_epi32(w, 12), _mm_srli_epi32(w, 18)));
            words[k] = _mm_and_si128(packed, _mm_set1_epi32(0xff));
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(block + 2),
                         _mm_packus_epi16(_mm_packs_epi32(words[0], words[1]),
                                          _mm_packs_epi32(words[2], words[3])));
    }
}

}  // namespace
}  // namespace rebox::quant::lanes
