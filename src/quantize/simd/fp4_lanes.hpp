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
#include <cstring>
#include <limits>

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

// The band, in ulps of amax, next to each power of two inside which the exponent is libm's: only
// there can floor(log2f(amax)) differ from amax's exponent field. Below 2^(k+1) log2f rounds up
// to k + 1 for amax within ~1.44 * n * 2^-24 / ulp(k + 1) of it: glibc 2.36 does so for up to 44
// floats below 2^128 (every positive normal float checked), a 4096-float band leaves ~93x margin
// (log2 of the band's edge is 2^-11.5 below k + 1, 23 ulps of log2f's result at |k + 1| <= 128);
// above 2^k the true value is at least k, and the band keeps any log2f that would stray below it
// from the fast path too.
constexpr uint32_t kMxfp4ExponentGuard = 4096;

// ggml's e = amax > 0 ? (uint8_t)(floorf(log2f(amax)) - 2 + 127) : 0 and d = e8m0_to_fp32_half(e)
// from amax's bits: for a normal amax of exponent field f in [4, 254] whose mantissa is outside
// the guard bands, floor(log2(amax)) = f - 127, so e = f - 2 and d = 2^(f - 130) (normal, and
// 12 * d finite). Everything else (zero, subnormal and tiny amax, infinity, the bands) returns
// false: the caller takes the scalar kernel's own function (libm's log2f).
inline bool mxfp4_exponent_from_bits(float amax, uint8_t* e, float* d) {
    uint32_t bits;
    std::memcpy(&bits, &amax, sizeof bits);
    const uint32_t field = bits >> 23, mantissa = bits & 0x7fffffu;
    if (field < 4 || field > 254 || mantissa < kMxfp4ExponentGuard ||
        mantissa > 0x7fffffu - kMxfp4ExponentGuard)
        return false;
    *e = static_cast<uint8_t>(field - 2);
    const uint32_t d_bits = (field - 3) << 23;  // e8m0_to_fp32_half(e) = 2^(e - 128), e >= 2
    std::memcpy(d, &d_bits, sizeof *d);
    return true;
}

// mxfp4_best_index's result where every |x| of the block is below 16 * d and d is a normal power
// of two (the exponent from the bits above). The search over the 16 entries reduces to |x| between
// two neighbouring magnitudes m_i * d <= |x| < m_{i+1} * d of {0, 1, 2, 3, 4, 6, 8, 12}:
// - For x >= 0 (and -0) the positive entries 0..7 come first, and a negative entry's error
//   m*d + |x| is never below the positive one's; for x < 0 the positive entries' errors m*d + |x|
//   are never below entry 0's |x|, entry 8 ties it, and 9..15 are the magnitudes again. So the
//   code is the magnitude's index i, plus 8 for a negative x with i > 0.
// - Among magnitudes, ggml's errors |x| - m_k*d for m_k*d <= |x| fall strictly as k grows, and
//   m_k*d - |x| above rise strictly: neighbours differ by at least d, far more than an ulp of
//   anything below 16 * d, so rounding cannot make them equal. The first minimum is therefore
//   the lower neighbour, or the upper one when its rounded error is strictly smaller (a tie keeps
//   the lower one, as first-wins does); each error is the same rounded subtraction ggml does
//   (|m*d - x| = |x| - m*d in magnitude, the products exact).
// - A NaN x fails every comparison: index 0, as in ggml (every error NaN).
template <class V>
typename V::F mxfp4_bracket_index(typename V::F x, float d) {
    using F = typename V::F;
    constexpr float kMagnitude[8] = {0.f, 1.f, 2.f, 3.f, 4.f, 6.f, 8.f, 12.f};
    const F a = V::abs(x);
    F lo = V::zero(), hi = V::set1(d), index = V::zero();
    for (int k = 1; k < 8; ++k) {
        const F t = V::set1(kMagnitude[k] * d);  // m_k*d <= |x| (false for NaN): move up
        const F next =
            V::set1(k < 7 ? kMagnitude[k + 1] * d : std::numeric_limits<float>::infinity());
        lo = V::select_le(t, a, lo, t);
        hi = V::select_le(t, a, hi, next);
        index = V::select_le(t, a, index, V::set1(static_cast<float>(k)));
    }
    const F one = V::set1(1.f), zero = V::zero();
    index = V::add(index, V::and_(V::lt(V::sub(hi, a), V::sub(a, lo)), one));
    const F negative = V::and_(V::lt(x, zero), V::lt(zero, index));
    return V::add(index, V::and_(negative, V::set1(8.f)));
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
        const float amax = V::hmax(amax_lanes);
        float d;
        F codes[kVecs];
        if (mxfp4_exponent_from_bits(amax, &block[0], &d)) {
            for (int j = 0; j < kVecs; ++j) codes[j] = mxfp4_bracket_index<V>(v[j], d);
        } else {
            block[0] = mxfp4_block_exponent(amax, &d);
            const F dv = V::set1(d);
            for (int j = 0; j < kVecs; ++j) codes[j] = mxfp4_best_index<V>(v[j], dv);
        }
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
