// IQ4_NL and IQ4_XS in lanes (ggml's quantize_row_iq4_nl_impl with ntry = 7, with and without an
// imatrix): lane k runs the best-scale search of 32-value block k (IQ4_NL: consecutive blocks of a
// row; IQ4_XS: the 8 sub-blocks of a super-block, two super-blocks on 16 lanes) over ggml's
// non-linear grid kvalues_iq4nl, then picks each value's code with the chosen scale. ggml's
// bisection best_index_int8 becomes a scan over the grid whose outcome is the same for every x,
// NaN included. IQ4_XS's per-super-block steps (the 6-bit scales against one fp16 scale) stay
// scalar, as in ggml.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "quantize/simd/k_quant_blocks.hpp"
#include "quantize/simd/lane_search.hpp"

namespace rebox::quant::lanes {
namespace {

constexpr float kIq4Grid[16] = {-127.f, -104.f, -83.f, -65.f, -49.f, -35.f, -22.f, -10.f,
                                1.f,    13.f,   25.f,  38.f,  53.f,  69.f,  89.f,  113.f};
constexpr int kIq4Ntry = 7;
constexpr int kIq4XsBlockBytes = 136;  // d, scales_h, scales_l[4], qs[128]

// best_index_int8(16, kvalues_iq4nl, x) per lane, as the grid value (and, when index != nullptr,
// its index as a float). The bisection ends at ml = mu - 1 with grid[ml] <= x < grid[mu], where
// mu - 1 counts the k in 1..14 with !(x < grid[k]) (a NaN x counts all of them, as the bisection
// moves ml up on every failed `x < grid[mav]`), then takes grid[ml] when x - grid[ml] <
// grid[mu] - x; x <= grid[0] and x >= grid[15] return the ends first.
template <class V>
typename V::F iq4_nearest(typename V::F x, typename V::F* index) {
    using F = typename V::F;
    F lo = V::set1(kIq4Grid[0]), hi = V::set1(kIq4Grid[1]), ml = V::zero();
    for (int k = 1; k <= 14; ++k) {
        const F grid_k = V::set1(kIq4Grid[k]);
        lo = V::select_lt(x, grid_k, grid_k, lo);  // x < grid[k] ? lo : grid[k]
        hi = V::select_lt(x, grid_k, V::set1(kIq4Grid[k + 1]), hi);
        if (index) ml = V::select_lt(x, grid_k, V::set1(static_cast<float>(k)), ml);
    }
    const F take_lo = V::lt(V::sub(x, lo), V::sub(hi, x));
    const F at_bottom = V::le(x, V::set1(kIq4Grid[0]));
    const F at_top = V::le(V::set1(kIq4Grid[15]), x);
    F q = V::select(take_lo, hi, lo);
    q = V::select(at_bottom, q, V::set1(kIq4Grid[0]));
    q = V::select(at_top, q, V::set1(kIq4Grid[15]));
    if (index) {
        F i = V::select(take_lo, V::add(ml, V::set1(1.f)), ml);
        i = V::zero_where(at_bottom, i);
        *index = V::select(at_top, i, V::set1(15.f));
    }
    return q;
}

// The best scale of each lane's 32 values x[i] (transposed) under weights w[i]; 0 for an all-zero
// block. ggml's first pass (d = -max / -127) and its 15 tries id = (itry - 127) / max.
template <class V>
typename V::F iq4_best_scale(const typename V::F* x, const typename V::F* w) {
    using F = typename V::F;
    F max;
    const F all_zero = largest_magnitude<V, 32>(x, &max);
    F d = V::div(V::neg(max), V::set1(kIq4Grid[0]));
    F id = V::div(V::set1(1.f), d);
    F sumqx = V::zero(), sumq2 = V::zero();
    for (int j = 0; j < 32; ++j) {
        const F q = iq4_nearest<V>(V::mul(id, x[j]), nullptr);
        const F wq = V::mul(w[j], q);
        sumqx = V::add(sumqx, V::mul(wq, x[j]));
        sumq2 = V::add(sumq2, V::mul(wq, q));
    }
    d = V::select(V::gt(sumq2, V::zero()), V::zero(), V::div(sumqx, sumq2));
    F best = V::mul(d, sumqx);
    for (int itry = -kIq4Ntry; itry <= kIq4Ntry; ++itry) {
        id = V::div(V::set1(static_cast<float>(itry + static_cast<int>(kIq4Grid[0]))), max);
        sumqx = V::zero(), sumq2 = V::zero();
        for (int j = 0; j < 32; ++j) {
            const F q = iq4_nearest<V>(V::mul(id, x[j]), nullptr);
            const F wq = V::mul(w[j], q);
            sumqx = V::add(sumqx, V::mul(wq, x[j]));
            sumq2 = V::add(sumq2, V::mul(wq, q));
        }
        const F take =
            V::and_(V::gt(sumq2, V::zero()), V::gt(V::mul(sumqx, sumqx), V::mul(best, sumq2)));
        if (!V::any(take)) continue;
        d = V::select(take, d, V::div(sumqx, sumq2));
        best = V::select(take, best, V::mul(d, sumqx));
    }
    return V::zero_where(all_zero, d);
}

// The weights of 32 transposed values: x^2, or qw * sqrt(sigma2 + x^2) with an imatrix.
template <class V>
void iq4_weights(const typename V::F* x, const typename V::F* qw, typename V::F sigma2,
                 typename V::F* w) {
    for (int i = 0; i < 32; ++i)
        w[i] = qw ? V::mul(qw[i], V::sqrt(V::add(sigma2, V::mul(x[i], x[i])))) : V::mul(x[i], x[i]);
}

// Codes of each lane's 32 values with the lane's inverse scale, transposed out to codes[32 * k + i]
// for the first `lanes` lanes.
template <class V>
void iq4_codes(const typename V::F* x, typename V::F id, int lanes, uint8_t* codes) {
    typename V::F index[32];
    for (int i = 0; i < 32; ++i) iq4_nearest<V>(V::mul(id, x[i]), &index[i]);
    transpose_codes_out<V, 32>(index, lanes, codes);
}

inline void iq4_pack_nibbles(const uint8_t* L, uint8_t* q4) {
    for (int j = 0; j < 16; ++j) q4[j] = static_cast<uint8_t>(L[j] | (L[16 + j] << 4));
}

// 1 / d, or 0 where d == 0 (ggml's `d ? 1/d : 0`; a NaN d gives NaN).
template <class V>
typename V::F inverse_or_zero(typename V::F d) {
    return V::select(V::eq(d, V::zero()), V::div(V::set1(1.f), d), V::zero());
}

// quantize_iq4_nl: W blocks of a row at a time; the imatrix path weighs by the block's own
// sigma2 = sum(x^2) * (2/32).
template <class V>
void iq4_nl_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
                 const float* imatrix) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kBlockBytes = 18;  // d, qs[16]
    const int64_t blocks_per_row = n_per_row / 32;
    for (int64_t row = 0; row < nrows; ++row) {
        const float* x = src + row * n_per_row;
        uint8_t* out = dst + row * blocks_per_row * kBlockBytes;
        for (int64_t b0 = 0; b0 < blocks_per_row; b0 += W) {
            const int lanes = static_cast<int>(blocks_per_row - b0 < W ? blocks_per_row - b0 : W);
            F xt[32], qw[32], w[32];
            transpose_in<V, 32>(x + 32 * b0, lanes, xt);
            F sigma2 = V::zero();
            if (imatrix) {
                transpose_in<V, 32>(imatrix + 32 * b0, lanes, qw);
                for (int i = 0; i < 32; ++i) sigma2 = V::add(sigma2, V::mul(xt[i], xt[i]));
                sigma2 = V::mul(sigma2, V::set1(2.f / 32.f));
            }
            iq4_weights<V>(xt, imatrix ? qw : nullptr, sigma2, w);
            const F d = iq4_best_scale<V>(xt, w);
            alignas(32) float d_lane[W];
            V::store(d_lane, d);
            alignas(32) uint8_t codes[32 * W];
            iq4_codes<V>(xt, inverse_or_zero<V>(d), lanes, codes);
            for (int k = 0; k < lanes; ++k) {
                uint8_t* block = out + kBlockBytes * (b0 + k);
                store_half(block, d_lane[k]);
                iq4_pack_nibbles(codes + 32 * k, block + 2);
            }
        }
    }
}

// `count` (1 .. kSuperBlocksPerStep) consecutive IQ4_XS super-blocks of one row, given each one's
// sum of x^2 in index order (imatrix path only; sigma2 = that sum * (2/256), as ggml scales it).
template <class V>
void iq4_xs_super_blocks(const float* x, const float* imatrix, const float* sum_x2, int count,
                         uint8_t* blocks) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kSuper = kSuperBlocksPerStep<V>;
    constexpr int kGroups = 8 * kSuper / W;
    const int subblocks = 8 * count;
    F xt[kGroups][32];
    alignas(32) float scales[8 * kSuper];
    for (int g = 0; g < kGroups; ++g) {
        const int lanes = subblocks - W * g < W ? subblocks - W * g : W;
        transpose_in<V, 32>(x + 32 * W * g, lanes, xt[g]);
        F qw[32], w[32];
        alignas(32) float s2_lane[W] = {};
        if (imatrix) {
            transpose_in<V, 32>(imatrix + 32 * W * g, lanes, qw);
            for (int k = 0; k < lanes; ++k) s2_lane[k] = sum_x2[(W * g + k) / 8] * (2.f / 256.f);
        }
        iq4_weights<V>(xt[g], imatrix ? qw : nullptr, V::load(s2_lane), w);
        V::store(scales + W * g, iq4_best_scale<V>(xt[g], w));
    }
    alignas(32) float idl[8 * kSuper] = {};
    for (int s = 0; s < count; ++s) {
        const float* sc = scales + 8 * s;
        uint8_t* y = blocks + kIq4XsBlockBytes * s;
        float max_scale = 0, amax_scale = 0;
        for (int ib = 0; ib < 8; ++ib) {
            const float abs_d = std::fabs(sc[ib]);
            if (abs_d > amax_scale) {
                amax_scale = abs_d;
                max_scale = sc[ib];
            }
        }
        const float d = -max_scale / 32;
        store_half(y, d);
        const float id = d != 0.f ? 1 / d : 0.f;
        uint16_t scales_h = 0;
        uint8_t* scales_l = y + 4;
        std::memset(scales_l, 0, 4);
        for (int ib = 0; ib < 8; ++ib) {
            int l = nearest_int_scalar(id * sc[ib]);
            l = l < -32 ? -32 : (l > 31 ? 31 : l);
            const float dl = d * static_cast<float>(l);
            idl[8 * s + ib] = dl != 0.f ? 1 / dl : 0.f;
            l += 32;
            scales_l[ib / 2] |= static_cast<uint8_t>((l & 0xf) << (4 * (ib % 2)));
            scales_h = static_cast<uint16_t>(scales_h | ((l >> 4) << (2 * ib)));
        }
        y[2] = static_cast<uint8_t>(scales_h & 0xff);
        y[3] = static_cast<uint8_t>(scales_h >> 8);
    }
    alignas(32) uint8_t L[256 * kSuper];
    for (int g = 0; g < kGroups; ++g) {
        const int lanes = subblocks - W * g < W ? subblocks - W * g : W;
        if (lanes > 0) iq4_codes<V>(xt[g], V::load(idl + W * g), lanes, L + 32 * W * g);
    }
    for (int s = 0; s < count; ++s)
        for (int ib = 0; ib < 8; ++ib)
            iq4_pack_nibbles(L + 256 * s + 32 * ib, blocks + kIq4XsBlockBytes * s + 8 + 16 * ib);
}

// quantize_iq4_xs.
template <class V>
void iq4_xs_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
                 const float* imatrix) {
    for_each_super_block_step<V, kIq4XsBlockBytes>(src, dst, nrows, n_per_row, imatrix,
                                                   iq4_xs_super_blocks<V>);
}

}  // namespace
}  // namespace rebox::quant::lanes
