// MXFP4 in lanes (ggml's quantize_row_mxfp4_ref; ggml ignores the imatrix): the lanes are a
// block's 32 elements. The block's largest |x| is a max over lanes (a NaN is skipped, as
// `amax < fabsf(x)` skips it), the E8M0 exponent comes from the scalar kernel's own function
// (libm's log2f, called from one place), and each element's code is ggml's first-wins search over
// the 16 entries of kvalues_mxfp4: err = |kvalues[i] * d - x|, taken when strictly smaller.
// NVFP4 (ggml's quantize_row_nvfp4_ref, imatrix ignored) likewise: the lanes are a 16-value
// sub-block's elements, its UE4M3 scale comes from the scalar kernel's own function, and byte j of
// sub-block s packs code j (low nibble) with code j + 8 (SSE2 on 16 codes at a time).
#pragma once

#include <emmintrin.h>

#include <cstdint>

#include "quantize/block_kernels.hpp"
#include "quantize/simd/legacy_lanes.hpp"

namespace rebox::quant::lanes {
namespace {

constexpr float kMxfp4Grid[16] = {0.f, 1.f,  2.f,  3.f,  4.f,  6.f,  8.f,  12.f,
                                  0.f, -1.f, -2.f, -3.f, -4.f, -6.f, -8.f, -12.f};

// The index of the first grid entry nearest to x (as a float) under scale d.
template <class V>
typename V::F mxfp4_best_index(typename V::F x, typename V::F d) {
    using F = typename V::F;
    F best_err = V::abs(V::sub(V::mul(V::set1(kMxfp4Grid[0]), d), x));
    F index = V::zero();
    for (int i = 1; i < 16; ++i) {
        const F err = V::abs(V::sub(V::mul(V::set1(kMxfp4Grid[i]), d), x));
        index = V::select_lt(err, best_err, index, V::set1(static_cast<float>(i)));
        best_err = V::select_lt(err, best_err, best_err, err);
    }
    return index;
}

template <class V>
void mxfp4_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float*) {
    using F = typename V::F;
    constexpr int kVecs = 32 / V::kWidth;
    constexpr int kBlockBytes = 17;  // e, qs[16]
    const int64_t nblocks = nrows * (n_per_row / 32);
    for (int64_t b = 0; b < nblocks; ++b) {
        const float* x = src + 32 * b;
        uint8_t* block = dst + kBlockBytes * b;
        F v[kVecs];
        F amax_lanes = V::zero();
        for (int j = 0; j < kVecs; ++j) {
            v[j] = V::loadu(x + V::kWidth * j);
            amax_lanes = V::max(V::abs(v[j]), amax_lanes);  // a NaN lane keeps the old value
        }
        float d;
        block[0] = mxfp4_block_exponent(V::hmax(amax_lanes), &d);
        const F dv = V::set1(d);
        F codes[kVecs];
        for (int j = 0; j < kVecs; ++j) codes[j] = mxfp4_best_index<V>(v[j], dv);
        q4_0_pack<V>(codes, block + 1);  // qs[j] = code j | code j+16 << 4
    }
}

template <class V>
void nvfp4_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float*) {
    using F = typename V::F;
    constexpr int kVecs = 16 / V::kWidth;  // one sub-block of 16 values
    constexpr int kBlockBytes = 36;        // d[4], qs[32]
    const int64_t nblocks = nrows * (n_per_row / 64);
    for (int64_t b = 0; b < nblocks; ++b) {
        const float* x = src + 64 * b;
        uint8_t* block = dst + kBlockBytes * b;
        alignas(16) uint8_t codes[64];
        for (int s = 0; s < 4; ++s) {
            F v[kVecs];
            F amax_lanes = V::zero();
            for (int j = 0; j < kVecs; ++j) {
                v[j] = V::loadu(x + 16 * s + V::kWidth * j);
                amax_lanes = V::max(V::abs(v[j]), amax_lanes);  // a NaN lane keeps the old value
            }
            float d;
            block[s] = nvfp4_sub_block_scale(V::hmax(amax_lanes), &d);
            const F dv = V::set1(d);
            F c[kVecs];
            for (int j = 0; j < kVecs; ++j) c[j] = mxfp4_best_index<V>(v[j], dv);
            V::store_bytes(codes + 16 * s, c, kVecs);
        }
        for (int s = 0; s < 4; ++s) {
            // Codes are below 16: shifting 16-bit words by 4 keeps each in its own byte.
            const __m128i c = _mm_load_si128(reinterpret_cast<const __m128i*>(codes + 16 * s));
            const __m128i packed = _mm_or_si128(c, _mm_slli_epi16(_mm_srli_si128(c, 8), 4));
            _mm_storel_epi64(reinterpret_cast<__m128i*>(block + 4 + 8 * s), packed);
        }
    }
}

}  // namespace
}  // namespace rebox::quant::lanes
