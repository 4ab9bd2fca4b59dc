// Q3_K in lanes (ggml's quantize_row_q3_K_ref and quantize_row_q3_K_impl): lane k runs the scale
// search of sub-block k (16 values) of a super-block (make_q3_quants' coordinate descent in the ref
// path, make_qx_quants with the imatrix weights otherwise), then requantizes it. The imatrix path's
// search over the 16 sub-block scales is make_qx_quants in one lane.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "quantize/simd/k_quant_blocks.hpp"
#include "quantize/simd/lane_search.hpp"

namespace rebox::quant::lanes {
namespace {

constexpr int kQ3KBlockBytes = 110;  // hmask[32], qs[64], scales[12], d

// make_q3_quants(16, nmax, x, L, do_rmse = true): signed codes L = l + nmax (0 for an all-zero
// group); up to 5 coordinate-descent tries, each lane updating its sums element by element in
// order. A lane whose try changed nothing has stopped in ggml; another try leaves it unchanged.
template <class V, int kN>
typename V::F make_q3_lanes(const typename V::F* x, int nmax, typename V::F* L) {
    using F = typename V::F;
    F max;
    const F all_zero = largest_magnitude<V, kN>(x, &max);
    const F lo = V::set1(static_cast<float>(-nmax)), hi = V::set1(static_cast<float>(nmax - 1));
    const F iscale = V::div(V::set1(static_cast<float>(-nmax)), max);
    F w[kN], wx[kN];
    F sumlx = V::zero(), suml2 = V::zero();
    for (int i = 0; i < kN; ++i) {
        w[i] = V::mul(x[i], x[i]);
        wx[i] = V::mul(w[i], x[i]);
        L[i] = nearest_int_clamped<V>(V::mul(iscale, x[i]), lo, hi);
        sumlx = V::add(sumlx, V::mul(wx[i], L[i]));
        suml2 = V::add(suml2, V::mul(V::mul(w[i], L[i]), L[i]));
    }
    const F zero = V::zero();
    for (int itry = 0; itry < 5; ++itry) {
        F changed = V::zero();
        for (int i = 0; i < kN; ++i) {
            F slx = V::sub(sumlx, V::mul(wx[i], L[i]));
            const F positive = V::gt(slx, zero);
            F sl2 = V::sub(suml2, V::mul(V::mul(w[i], L[i]), L[i]));
            const F new_l = nearest_int_clamped<V>(V::div(V::mul(x[i], sl2), slx), lo, hi);
            const F differs = V::zero_where(V::eq(new_l, L[i]), positive);
            slx = V::add(slx, V::mul(wx[i], new_l));
            sl2 = V::add(sl2, V::mul(V::mul(w[i], new_l), new_l));
            const F better =
                V::gt(V::mul(V::mul(slx, slx), suml2), V::mul(V::mul(sumlx, sumlx), sl2));
            const F take = V::and_(differs, V::and_(V::gt(sl2, zero), better));
            L[i] = V::select(take, L[i], new_l);
            sumlx = V::select(take, sumlx, slx);
            suml2 = V::select(take, suml2, sl2);
            changed = V::or_(changed, take);
        }
        if (!V::any(changed)) break;
    }
    const F offset = V::set1(static_cast<float>(nmax));
    for (int i = 0; i < kN; ++i) L[i] = V::zero_where(all_zero, V::add(L[i], offset));
    const F scale = V::select(V::gt(suml2, zero), zero, V::div(sumlx, suml2));
    return V::zero_where(all_zero, scale);
}

// The 6-bit scale l (0..63) of sub-block j into Q3_K's scales[12].
inline void q3_k_pack_scale(int j, int l, uint8_t* scales) {
    if (j < 8)
        scales[j] = static_cast<uint8_t>(l & 0xF);
    else
        scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
    l >>= 4;
    scales[j % 4 + 8] |= static_cast<uint8_t>(l << (2 * (j / 4)));
}

inline int q3_k_unpack_scale(int j, const uint8_t* scales) {
    int8_t sc = static_cast<int8_t>(j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4);
    sc = static_cast<int8_t>((sc | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
    return sc;
}

// Codes 0..7: the high bit of code j goes to bit j/32 of hmask[j%32] (the block is zeroed), the
// low two bits to qs. SSE2 byte compares, 32 codes (one hmask bit) at a time.
inline void q3_k_pack_codes(uint8_t* L, uint8_t* block) {
    const __m128i three = _mm_set1_epi8(3), four = _mm_set1_epi8(4);
    __m128i low_half = _mm_setzero_si128(), high_half = _mm_setzero_si128();
    for (int g = 0; g < 8; ++g) {
        __m128i* codes = reinterpret_cast<__m128i*>(L + 32 * g);
        const __m128i a = _mm_loadu_si128(codes), b = _mm_loadu_si128(codes + 1);
        const __m128i a_high = _mm_cmpgt_epi8(a, three), b_high = _mm_cmpgt_epi8(b, three);
        const __m128i bit = _mm_set1_epi8(static_cast<char>(1 << g));
        low_half = _mm_or_si128(low_half, _mm_and_si128(a_high, bit));
        high_half = _mm_or_si128(high_half, _mm_and_si128(b_high, bit));
        _mm_storeu_si128(codes, _mm_sub_epi8(a, _mm_and_si128(a_high, four)));
        _mm_storeu_si128(codes + 1, _mm_sub_epi8(b, _mm_and_si128(b_high, four)));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(block), low_half);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(block + 16), high_half);
    pack_2bit_codes(L, block + 32);
}

template <class V>
void q3_k_super_block(const float* x, const float* imatrix, float sum_x2, uint8_t* block) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kGroups = 16 / W;
    F xt[kGroups][16], Lt[kGroups][16];
    alignas(32) float scales[16], sw[16];
    const F sigma2 = V::set1(2 * sum_x2 / 256);
    for (int g = 0; g < kGroups; ++g) {
        transpose_in<V, 16>(x + 16 * W * g, W, xt[g]);
        if (!imatrix) {
            V::store(scales + W * g, make_q3_lanes<V, 16>(xt[g], 4, Lt[g]));
            continue;
        }
        F qw[16], w[16];
        transpose_in<V, 16>(imatrix + 16 * W * g, W, qw);
        F sumw = V::zero();
        for (int i = 0; i < 16; ++i) {
            w[i] = V::mul(qw[i], V::sqrt(V::add(sigma2, V::mul(xt[g][i], xt[g][i]))));
            sumw = V::add(sumw, w[i]);
        }
        V::store(sw + W * g, sumw);
        V::store(scales + W * g, make_qx_lanes<V, 16>(xt[g], w, 4, Lt[g]));
    }
    std::memset(block, 0, kQ3KBlockBytes);
    uint8_t* packed_scales = block + 96;
    if (!imatrix) {
        float max_scale = 0, amax = 0;
        for (int j = 0; j < 16; ++j) {
            const float scale = std::fabs(scales[j]);
            if (scale > amax) amax = scale, max_scale = scales[j];
        }
        if (max_scale != 0.f) {
            const float iscale = -32.f / max_scale;
            for (int j = 0; j < 16; ++j) {
                int8_t l = static_cast<int8_t>(nearest_int_scalar(iscale * scales[j]));
                l = static_cast<int8_t>((l < -32 ? -32 : (31 < l ? 31 : l)) + 32);
                q3_k_pack_scale(j, l, packed_scales);
            }
            store_half(block + 108, 1 / iscale);
        }
    } else {
        // make_qx_quants(16, 32, scales, Ls, 1, sw) in lane 0 (the other lanes are all-zero
        // groups).
        F xs[16], ws[16], ls[16];
        alignas(32) float column[W] = {}, weight[W] = {};
        for (int j = 0; j < 16; ++j) {
            column[0] = scales[j], weight[0] = sw[j];
            xs[j] = V::load(column), ws[j] = V::load(weight);
        }
        alignas(32) float d_lanes[W];
        V::store(d_lanes, make_qx_lanes<V, 16>(xs, ws, 32, ls));
        alignas(32) uint8_t Ls[16 * W];
        transpose_codes_out<V, 16>(ls, 1, Ls);
        for (int j = 0; j < 16; ++j) q3_k_pack_scale(j, Ls[j], packed_scales);
        store_half(block + 108, d_lanes[0]);
    }
    const float d = load_half(block + 108);
    alignas(32) uint8_t L[256];
    for (int g = 0; g < kGroups; ++g) {
        alignas(32) float d_lane[W];
        for (int k = 0; k < W; ++k)
            d_lane[k] = d * static_cast<float>(q3_k_unpack_scale(W * g + k, packed_scales));
        requantize_symmetric<V, 16>(xt[g], V::load(d_lane), -4.f, 3.f, 4.f, Lt[g]);
        transpose_codes_out<V, 16>(Lt[g], W, L + 16 * W * g);
    }
    q3_k_pack_codes(L, block);
}

template <class V>
void q3_k_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
               const float* imatrix) {
    for_each_super_block<V, SuperBlock<kQ3KBlockBytes, q3_k_super_block<V>>>(src, dst, nrows,
                                                                             n_per_row, imatrix);
}

}  // namespace
}  // namespace rebox::quant::lanes
