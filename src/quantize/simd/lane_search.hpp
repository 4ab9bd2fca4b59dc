// ggml's scale searches (make_qx_quants, make_qkx2_quants / make_qkx3_quants) run in lanes: lane k
// searches its own group of n values, repeating ggml's float operations in ggml's order (sums in
// index order, a*b*c as (a*b)*c, every constant a float), and each data-dependent `if` becomes a
// per-lane select. Inputs are transposed: x[i] holds element i of every lane's group.
#pragma once

#include <cstdint>

namespace rebox::quant::lanes {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS

// MAX(lo, MIN(hi, nearest_int(f))) as a float (the integer is exact in binary32).
// ggml clamps the int; min/max on its exact float pick the same value.
template <class V>
typename V::F clamp_code(typename V::F l, typename V::F lo, typename V::F hi) {
    return V::max(V::min(l, hi), lo);
}

template <class V>
typename V::F nearest_int_clamped(typename V::F f, typename V::F lo, typename V::F hi) {
    return clamp_code<V>(V::nearest_int(f), lo, hi);
}

// The first element of largest |x| per lane (strict `>`: the first one wins, keeping its sign) and
// the mask of the lanes whose largest |x| is below GROUP_MAX_EPS (all-zero groups).
template <class V, int kN>
typename V::F largest_magnitude(const typename V::F* x, typename V::F* max) {
    using F = typename V::F;
    F amax = V::zero();
    *max = V::zero();
    for (int i = 0; i < kN; ++i) {
        const F ax = V::abs(x[i]);
        const F bigger = V::gt(ax, amax);
        amax = V::select(bigger, amax, ax);
        *max = V::select(bigger, *max, x[i]);
    }
    return V::lt(amax, V::set1(kGroupMaxEps));
}

// Requantization of symmetric codes with each lane's d (Q3_K, Q6_K): L = clamp(nearest_int(x/d),
// lo, hi) + offset, except where d == 0 (`if (!d) continue`: the search's codes stay).
template <class V, int kN>
void requantize_symmetric(const typename V::F* x, typename V::F d, float lo, float hi, float offset,
                          typename V::F* L) {
    const typename V::F skip = V::eq(d, V::zero());
    const typename V::F lov = V::set1(lo), hiv = V::set1(hi), off = V::set1(offset);
    for (int i = 0; i < kN; ++i)
        L[i] =
            V::select(skip, V::add(nearest_int_clamped<V>(V::div(x[i], d), lov, hiv), off), L[i]);
}

// make_qx_quants(n, nmax, x, L, rmse_type = 1, qw): symmetric codes L = l + nmax in [0, 2*nmax-1]
// (L = 0 for an all-zero group), returns the scale per lane. qw == nullptr weights by x*x.
template <class V, int kN>
typename V::F make_qx_lanes(const typename V::F* x, const typename V::F* qw, int nmax,
                            typename V::F* L) {
    using F = typename V::F;
    F max;
    const F all_zero = largest_magnitude<V, kN>(x, &max);
    F w[kN], wx[kN], Laux[kN];
    for (int i = 0; i < kN; ++i) {
        w[i] = qw ? qw[i] : V::mul(x[i], x[i]);
        wx[i] = V::mul(w[i], x[i]);
    }
    const F lo = V::set1(static_cast<float>(-nmax)), hi = V::set1(static_cast<float>(nmax - 1));
    const F offset = V::set1(static_cast<float>(nmax));
    F iscale = V::div(V::set1(static_cast<float>(-nmax)), max);
    F sumlx = V::zero(), suml2 = V::zero();
    for (int i = 0; i < kN; ++i) {
        const F l = clamp_code<V>(V::nearest_int(V::mul(iscale, x[i])), lo, hi);
        L[i] = V::add(l, offset);
        sumlx = V::add(sumlx, V::mul(wx[i], l));
        suml2 = V::add(suml2, V::mul(V::mul(w[i], l), l));
    }
    F scale = V::zero_where(V::eq(suml2, V::zero()), V::div(sumlx, suml2));
    F best = V::mul(scale, sumlx);
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        const float step = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is));
        iscale = V::div(V::set1(step), max);
        sumlx = V::zero(), suml2 = V::zero();
        for (int i = 0; i < kN; ++i) {
            const F l = clamp_code<V>(V::nearest_int(V::mul(iscale, x[i])), lo, hi);
            Laux[i] = l;
            sumlx = V::add(sumlx, V::mul(wx[i], l));
            suml2 = V::add(suml2, V::mul(V::mul(w[i], l), l));
        }
        const F take =
            V::and_(V::gt(suml2, V::zero()), V::gt(V::mul(sumlx, sumlx), V::mul(best, suml2)));
        if (!V::any(take)) continue;
        for (int i = 0; i < kN; ++i) L[i] = V::select(take, L[i], V::add(Laux[i], offset));
        const F this_scale = V::div(sumlx, suml2);
        scale = V::select(take, scale, this_scale);
        best = V::select(take, best, V::mul(this_scale, sumlx));
    }
    for (int i = 0; i < kN; ++i) L[i] = V::zero_where(all_zero, L[i]);
    return V::zero_where(all_zero, scale);
}

// The error term of make_qkx2/3_quants: w * |scale*l + min - x| (use_mad) or w * (..)^2.
template <class V, bool kUseMad>
typename V::F weighted_error(typename V::F scale, typename V::F l, typename V::F min,
                             typename V::F x, typename V::F w) {
    const typename V::F diff = V::sub(V::add(V::mul(scale, l), min), x);
    return V::mul(w, kUseMad ? V::abs(diff) : V::mul(diff, diff));
}

// make_qkx2_quants (kFlatIfLessEqual = false: `max == min`) and make_qkx3_quants (true:
// `max <= min`) with weights given: asymmetric codes L in [0, nmax]; returns the scale per lane and
// stores -min in *the_min. rmin + rdelta*is + nmax for is = 0..nstep, as ggml adds it.
template <class V, int kN, bool kUseMad, bool kFlatIfLessEqual>
typename V::F make_qkx_lanes(const typename V::F* x, const typename V::F* w, int nmax, float rmin,
                             float rdelta, int nstep, typename V::F* L, typename V::F* the_min) {
    using F = typename V::F;
    F min = x[0], max = x[0], sum_w = w[0];
    F sum_x = V::mul(sum_w, x[0]);
    for (int i = 1; i < kN; ++i) {
        min = V::min(x[i], min);  // if (x < min) min = x
        max = V::max(x[i], max);  // if (x > max) max = x
        sum_w = V::add(sum_w, w[i]);
        sum_x = V::add(sum_x, V::mul(w[i], x[i]));
    }
    min = V::zero_where(V::gt(min, V::zero()), min);  // if (min > 0) min = 0
    const F flat = kFlatIfLessEqual ? V::le(max, min) : V::eq(max, min);
    const F flat_min = min;
    const F zero = V::zero(), top = V::set1(static_cast<float>(nmax));
    F iscale = V::div(top, V::sub(max, min));
    F scale = V::div(V::set1(1.f), iscale);
    F best = V::zero();
    for (int i = 0; i < kN; ++i) {
        L[i] = nearest_int_clamped<V>(V::mul(iscale, V::sub(x[i], min)), zero, top);
        best = V::add(best, weighted_error<V, kUseMad>(scale, L[i], min, x[i], w[i]));
    }
    F Laux[kN];
    for (int is = 0; is <= nstep; ++is) {
        const float step = (rmin + rdelta * static_cast<float>(is)) + static_cast<float>(nmax);
        iscale = V::div(V::set1(step), V::sub(max, min));  // min: the latest accepted one
        F sum_l = V::zero(), sum_l2 = V::zero(), sum_xl = V::zero();
        for (int i = 0; i < kN; ++i) {
            const F l = nearest_int_clamped<V>(V::mul(iscale, V::sub(x[i], min)), zero, top);
            Laux[i] = l;
            const F wl = V::mul(w[i], l);
            sum_l = V::add(sum_l, wl);
            sum_l2 = V::add(sum_l2, V::mul(wl, l));
            sum_xl = V::add(sum_xl, V::mul(wl, x[i]));
        }
        const F D = V::sub(V::mul(sum_w, sum_l2), V::mul(sum_l, sum_l));
        const F positive = V::gt(D, zero);
        if (!V::any(positive)) continue;
        F this_scale = V::div(V::sub(V::mul(sum_w, sum_xl), V::mul(sum_x, sum_l)), D);
        F this_min = V::div(V::sub(V::mul(sum_l2, sum_x), V::mul(sum_l, sum_xl)), D);
        const F min_above_zero = V::gt(this_min, zero);
        this_min = V::zero_where(min_above_zero, this_min);
        this_scale = V::select(min_above_zero, this_scale, V::div(sum_xl, sum_l2));
        F cur = V::zero();
        for (int i = 0; i < kN; ++i)
            cur =
                V::add(cur, weighted_error<V, kUseMad>(this_scale, Laux[i], this_min, x[i], w[i]));
        const F take = V::and_(positive, V::lt(cur, best));
        if (!V::any(take)) continue;
        for (int i = 0; i < kN; ++i) L[i] = V::select(take, L[i], Laux[i]);
        best = V::select(take, best, cur);
        scale = V::select(take, scale, this_scale);
        min = V::select(take, min, this_min);
    }
    for (int i = 0; i < kN; ++i) L[i] = V::zero_where(flat, L[i]);
    *the_min = V::neg(V::select(flat, min, flat_min));
    return V::zero_where(flat, scale);
}

// Transposes `lanes` groups of kN consecutive floats (group k at src + k*kN) into x[i] = element i
// of every group; lanes past `lanes` read 0.
template <class V, int kN>
void transpose_in(const float* src, int lanes, typename V::F* x) {
    constexpr int W = V::kWidth;
    alignas(32) float buffer[kN * W];
    for (int k = 0; k < W; ++k)
        for (int i = 0; i < kN; ++i) buffer[i * W + k] = k < lanes ? src[k * kN + i] : 0.f;
    for (int i = 0; i < kN; ++i) x[i] = V::load(buffer + i * W);
}

// The inverse for codes: out[k*kN + i] = (uint8_t)L[i] lane k, for the first `lanes` lanes.
template <class V, int kN>
void transpose_codes_out(const typename V::F* L, int lanes, uint8_t* out) {
    constexpr int W = V::kWidth;
    alignas(32) float buffer[kN * W];
    for (int i = 0; i < kN; ++i) V::store(buffer + i * W, L[i]);
    for (int k = 0; k < lanes; ++k)
        for (int i = 0; i < kN; ++i)
            out[k * kN + i] = static_cast<uint8_t>(static_cast<int>(buffer[i * W + k]));
}

// Per lane k, the sequential sum over i < n of src_k[i]^2 in index order (ggml's sum_x2 loops),
// with src_k = bases[k] for k < lanes.
template <class V>
void sum_squares_lanes(const float* const* bases, int lanes, int64_t n, float* out) {
    constexpr int W = V::kWidth;
    using F = typename V::F;
    alignas(32) float column[W] = {};
    F sum = V::zero();
    for (int64_t i = 0; i < n; ++i) {
        for (int k = 0; k < lanes; ++k) column[k] = bases[k][i];
        const F v = V::load(column);
        sum = V::add(sum, V::mul(v, v));
    }
    alignas(32) float sums[W];
    V::store(sums, sum);
    for (int k = 0; k < lanes; ++k) out[k] = sums[k];
}

// A super-block quantizer as for_each_super_block takes it.
template <int kBytes,
          void (*kQuantize)(const float* x, const float* imatrix, float sum_x2, uint8_t* block)>
struct SuperBlock {
    static constexpr int kBlockBytes = kBytes;
    static void quantize(const float* x, const float* imatrix, float sum_x2, uint8_t* block) {
        kQuantize(x, imatrix, sum_x2, block);
    }
};

// Every 256-value super-block of nrows x n_per_row values (rows back to back), as
// Block::quantize(x, imatrix of the super-block or nullptr, sum of x^2 over the super-block in
// index order (imatrix paths only), out). The sums are taken W super-blocks at a time in lanes.
template <class V, class Block>
void for_each_super_block(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
                          const float* imatrix) {
    const int64_t blocks_per_row = n_per_row / 256;
    constexpr int W = V::kWidth;
    for (int64_t row = 0; row < nrows; ++row) {
        const float* x = src + row * n_per_row;
        uint8_t* out = dst + row * blocks_per_row * Block::kBlockBytes;
        if (!imatrix) {
            for (int64_t b = 0; b < blocks_per_row; ++b)
                Block::quantize(x + 256 * b, nullptr, 0.f, out + Block::kBlockBytes * b);
            continue;
        }
        for (int64_t b0 = 0; b0 < blocks_per_row; b0 += W) {
            const int lanes = static_cast<int>(blocks_per_row - b0 < W ? blocks_per_row - b0 : W);
            const float* bases[W];
            for (int k = 0; k < lanes; ++k) bases[k] = x + 256 * (b0 + k);
            float sum_x2[W];
            sum_squares_lanes<V>(bases, lanes, 256, sum_x2);
            for (int k = 0; k < lanes; ++k)
                Block::quantize(x + 256 * (b0 + k), imatrix + 256 * (b0 + k), sum_x2[k],
                                out + Block::kBlockBytes * (b0 + k));
        }
    }
}

// Super-blocks one step of an 8-sub-block kernel quantizes together (Q4_K, Q5_K, IQ4_XS: lane k
// runs sub-block k of 8 * this many consecutive super-blocks): 16 lanes take two, 4 and 8 lanes
// one.
template <class V>
constexpr int kSuperBlocksPerStep = V::kWidth > 8 ? V::kWidth / 8 : 1;

// Every row's 256-value super-blocks (rows back to back), kSuperBlocksPerStep at a time (the last
// step of a row may hold fewer), as step(x, imatrix of those super-blocks or nullptr, each one's
// sum of x^2 in index order (imatrix paths only), count, out). The sums are taken W super-blocks at
// a time in lanes first (W is a multiple of kSuperBlocksPerStep).
template <class V, int kBlockBytes, class Step>
void for_each_super_block_step(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
                               const float* imatrix, Step step) {
    constexpr int W = V::kWidth;
    constexpr int kSuper = kSuperBlocksPerStep<V>;
    static_assert(W % kSuper == 0);
    const int64_t blocks_per_row = n_per_row / 256;
    for (int64_t row = 0; row < nrows; ++row) {
        const float* x = src + row * n_per_row;
        uint8_t* out = dst + row * blocks_per_row * kBlockBytes;
        for (int64_t b0 = 0; b0 < blocks_per_row; b0 += W) {
            const int chunk = static_cast<int>(blocks_per_row - b0 < W ? blocks_per_row - b0 : W);
            float sum_x2[W] = {};
            if (imatrix) {
                const float* bases[W];
                for (int k = 0; k < chunk; ++k) bases[k] = x + 256 * (b0 + k);
                sum_squares_lanes<V>(bases, chunk, 256, sum_x2);
            }
            for (int s = 0; s < chunk; s += kSuper) {
                const int64_t b = b0 + s;
                const int count = chunk - s < kSuper ? chunk - s : kSuper;
                step(x + 256 * b, imatrix ? imatrix + 256 * b : nullptr, sum_x2 + s, count,
                     out + kBlockBytes * b);
            }
        }
    }
}

}  // namespace
}  // namespace rebox::quant::lanes
