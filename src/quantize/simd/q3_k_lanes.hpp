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

// make_q3_quants(16, nmax, x, L, do_rmse = true) on kChains independent lane groups at once:
// signed codes L = l + nmax (0 for an all-zero group) and the scale per lane into scale[c]; up to
// 5 coordinate-descent tries, each lane updating its sums element by element in order. A lane
// whose try changed nothing has stopped in ggml; another try leaves it unchanged, so the chains
// run until no lane of any chain changes. Each element's step is a chain of dependent operations
// through sumlx / suml2 (a division among them); the chains' steps are interleaved, element by
// element, so one chain's latency is spent on the others' work.
template <class V, int kN, int kChains>
void make_q3_lanes(const typename V::F (*x)[kN], int nmax, typename V::F (*L)[kN],
                   typename V::F* scale) {
    using F = typename V::F;
    const F lo = V::set1(static_cast<float>(-nmax)), hi = V::set1(static_cast<float>(nmax - 1));
    const F zero = V::zero();
    F w[kChains][kN], wx[kChains][kN], sumlx[kChains], suml2[kChains], all_zero[kChains];
    for (int c = 0; c < kChains; ++c) {
        F max;
        all_zero[c] = largest_magnitude<V, kN>(x[c], &max);
        const F iscale = V::div(V::set1(static_cast<float>(-nmax)), max);
        sumlx[c] = V::zero();
        suml2[c] = V::zero();
        for (int i = 0; i < kN; ++i) {
            w[c][i] = V::mul(x[c][i], x[c][i]);
            wx[c][i] = V::mul(w[c][i], x[c][i]);
            L[c][i] = nearest_int_clamped<V>(V::mul(iscale, x[c][i]), lo, hi);
            sumlx[c] = V::add(sumlx[c], V::mul(wx[c][i], L[c][i]));
            suml2[c] = V::add(suml2[c], V::mul(V::mul(w[c][i], L[c][i]), L[c][i]));
        }
    }
    for (int itry = 0; itry < 5; ++itry) {
        F changed = V::zero();
        for (int i = 0; i < kN; ++i) {
            for (int c = 0; c < kChains; ++c) {
                F slx = V::sub(sumlx[c], V::mul(wx[c][i], L[c][i]));
                const F positive = V::gt(slx, zero);
                F sl2 = V::sub(suml2[c], V::mul(V::mul(w[c][i], L[c][i]), L[c][i]));
                const F new_l = nearest_int_clamped<V>(V::div(V::mul(x[c][i], sl2), slx), lo, hi);
                const F differs = V::zero_where(V::eq(new_l, L[c][i]), positive);
                slx = V::add(slx, V::mul(wx[c][i], new_l));
                sl2 = V::add(sl2, V::mul(V::mul(w[c][i], new_l), new_l));
                const F better = V::gt(V::mul(V::mul(slx, slx), suml2[c]),
                                       V::mul(V::mul(sumlx[c], sumlx[c]), sl2));
                const F take = V::and_(differs, V::and_(V::gt(sl2, zero), better));
                L[c][i] = V::select(take, L[c][i], new_l);
                sumlx[c] = V::select(take, sumlx[c], slx);
                suml2[c] = V::select(take, suml2[c], sl2);
                changed = V::or_(changed, take);
            }
        }
        if (!V::any(changed)) break;
    }
    const F offset = V::set1(static_cast<float>(nmax));
    for (int c = 0; c < kChains; ++c) {
        for (int i = 0; i < kN; ++i) L[c][i] = V::zero_where(all_zero[c], V::add(L[c][i], offset));
        const F sc = V::select(V::gt(suml2[c], zero), zero, V::div(sumlx[c], suml2[c]));
        scale[c] = V::zero_where(all_zero[c], sc);
    }
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

// The rest of a super-block once its 16 sub-blocks' searches are done (xt, Lt: its kGroups lane
// groups; scales: the 16 sub-block scales; sw: their weight sums, imatrix path only).
template <class V>
void q3_k_finish(const typename V::F (*xt)[16], typename V::F (*Lt)[16], const float* scales,
                 const float* sw, bool imatrix, uint8_t* block);

template <class V>
void q3_k_super_block(const float* x, const float* imatrix, float sum_x2, uint8_t* block) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kGroups = 16 / W;
    F xt[kGroups][16], Lt[kGroups][16];
    alignas(64) float scales[16], sw[16];
    const F sigma2 = V::set1(2 * sum_x2 / 256);
    for (int g = 0; g < kGroups; ++g) {
        transpose_in<V, 16>(x + 16 * W * g, W, xt[g]);
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
    q3_k_finish<V>(xt, Lt, scales, sw, imatrix != nullptr, block);
}

template <class V>
void q3_k_finish(const typename V::F (*xt)[16], typename V::F (*Lt)[16], const float* scales,
                 const float* sw, bool imatrix, uint8_t* block) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kGroups = 16 / W;
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

// quantize_row_q3_K_ref on kSuper consecutive super-blocks: their 16 * kSuper sub-blocks' searches
// run as 16 * kSuper / W interleaved chains of lanes, then each super-block is finished alone.
template <class V, int kSuper>
void q3_k_ref_super_blocks(const float* x, uint8_t* out) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kChains = 16 * kSuper / W;
    F xt[kChains][16], Lt[kChains][16], scale[kChains];
    for (int c = 0; c < kChains; ++c) transpose_in<V, 16>(x + 16 * W * c, W, xt[c]);
    make_q3_lanes<V, 16, kChains>(xt, 4, Lt, scale);
    alignas(64) float scales[16 * kSuper];
    for (int c = 0; c < kChains; ++c) V::store(scales + W * c, scale[c]);
    for (int s = 0; s < kSuper; ++s)
        q3_k_finish<V>(xt + 16 / W * s, Lt + 16 / W * s, scales + 16 * s, nullptr, false,
                       out + kQ3KBlockBytes * s);
}

// Super-blocks whose searches run together on the ref path: four chains of lanes (four
// super-blocks on 16 lanes, two on 8, one on 4).
template <class V>
constexpr int kQ3KRefSuperBlocks = V::kWidth / 4;

template <class V>
void q3_k_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
               const float* imatrix) {
    if (imatrix) {
        for_each_super_block<V, SuperBlock<kQ3KBlockBytes, q3_k_super_block<V>>>(
            src, dst, nrows, n_per_row, imatrix);
        return;
    }
    // ggml's ref path runs the super-blocks of all rows back to back.
    constexpr int kSuper = kQ3KRefSuperBlocks<V>;
    const int64_t total = nrows * (n_per_row / 256);
    int64_t b = 0;
    for (; b + kSuper <= total; b += kSuper)
        q3_k_ref_super_blocks<V, kSuper>(src + 256 * b, dst + kQ3KBlockBytes * b);
    for (; b < total; ++b) q3_k_ref_super_blocks<V, 1>(src + 256 * b, dst + kQ3KBlockBytes * b);
}

}  // namespace
}  // namespace rebox::quant::lanes
