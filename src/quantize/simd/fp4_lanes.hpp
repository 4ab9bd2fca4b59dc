// MXFP4 in lanes (ggml's quantize_row_mxfp4_ref; ggml ignores the imatrix): the lanes are a
// block's 32 elements. The block's largest |x| is a max over lanes (a NaN is skipped, as
// `amax < fabsf(x)` skips it), the E8M0 exponent comes from the scalar kernel's own function
// (libm's log2f, called from one place), and each element's code is ggml's first-wins search over
// the 16 entries of kvalues_mxfp4: err = |kvalues[i] * d - x|, taken when strictly smaller.
#pragma once

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

}  // namespace
}  // namespace rebox::quant::lanes
