// Q2_K in lanes (ggml's quantize_row_q2_K_ref and quantize_row_q2_K_impl): lane k runs the scale
// search of sub-block k (16 values) of a super-block (make_qkx2_quants with |x| weights and the
// mean absolute error in the ref path, make_qkx3_quants in the imatrix path), then requantizes it;
// the 4-bit scale packing and make_qp_quants per super-block stay scalar, as in ggml.
#pragma once

#include <cstdint>
#include <cstring>

#include "quantize/simd/k_quant_blocks.hpp"
#include "quantize/simd/lane_search.hpp"

namespace rebox::quant::lanes {
namespace {

constexpr int kQ2KBlockBytes = 84;  // scales[16], qs[64], d, dmin

template <class V>
void q2_k_super_block(const float* x, const float* imatrix, float sum_x2, uint8_t* block) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kGroups = 16 / W;
    F xt[kGroups][16], Lt[kGroups][16];
    alignas(32) float scales[16], mins[16], sw[16];
    const F sigma2 = V::set1(sum_x2 / 256);  // imatrix path: sumx2/QK_K (no factor 2 here)
    for (int g = 0; g < kGroups; ++g) {
        transpose_in<V, 16>(x + 16 * W * g, W, xt[g]);
        F w[16], the_min, scale;
        if (!imatrix) {
            for (int i = 0; i < 16; ++i) w[i] = V::abs(xt[g][i]);
            scale =
                make_qkx_lanes<V, 16, true, false>(xt[g], w, 3, -0.5f, 0.1f, 15, Lt[g], &the_min);
        } else {
            F qw[16];
            transpose_in<V, 16>(imatrix + 16 * W * g, W, qw);
            F sumw = V::zero();
            for (int i = 0; i < 16; ++i) {
                w[i] = V::mul(qw[i], V::sqrt(V::add(sigma2, V::mul(xt[g][i], xt[g][i]))));
                sumw = V::add(sumw, w[i]);
            }
            V::store(sw + W * g, sumw);
            scale =
                make_qkx_lanes<V, 16, false, true>(xt[g], w, 3, -0.9f, 0.05f, 36, Lt[g], &the_min);
        }
        V::store(scales + W * g, scale);
        V::store(mins + W * g, the_min);
    }
    std::memset(block, 0, kQ2KBlockBytes);
    uint8_t* sc = block;
    if (!imatrix) {
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < 16; ++j) {
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            const float iscale = 15.f / max_scale;
            for (int j = 0; j < 16; ++j)
                sc[j] = static_cast<uint8_t>(nearest_int_scalar(iscale * scales[j]));
            store_half(block + 80, max_scale / 15.f);
        }
        if (max_min > 0) {
            const float iscale = 15.f / max_min;
            for (int j = 0; j < 16; ++j)
                sc[j] |= static_cast<uint8_t>(nearest_int_scalar(iscale * mins[j]) << 4);
            store_half(block + 82, max_min / 15.f);
        }
    } else {
        uint8_t Ls[16], Lm[16];
        store_half(block + 80, make_qp_quants_scalar(16, 15, scales, Ls, sw));
        store_half(block + 82, make_qp_quants_scalar(16, 15, mins, Lm, sw));
        for (int j = 0; j < 16; ++j) sc[j] = static_cast<uint8_t>(Ls[j] | (Lm[j] << 4));
    }
    const float d = load_half(block + 80), dmin = load_half(block + 82);
    alignas(32) uint8_t L[256];
    const F lo = V::zero(), hi = V::set1(3.f);
    for (int g = 0; g < kGroups; ++g) {
        alignas(32) float d_lane[W], dm_lane[W];
        for (int k = 0; k < W; ++k) {
            d_lane[k] = d * static_cast<float>(sc[W * g + k] & 0xF);
            dm_lane[k] = dmin * static_cast<float>(sc[W * g + k] >> 4);
        }
        const F dv = V::load(d_lane), dmv = V::load(dm_lane);
        const F skip = V::eq(dv, V::zero());  // if (!d) continue: keep the search's codes
        for (int i = 0; i < 16; ++i) {
            const F l = nearest_int_clamped<V>(V::div(V::add(xt[g][i], dmv), dv), lo, hi);
            Lt[g][i] = V::select(skip, l, Lt[g][i]);
        }
        transpose_codes_out<V, 16>(Lt[g], W, L + 16 * W * g);
    }
    pack_2bit_codes(L, block + 16);
}

template <class V>
void q2_k_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
               const float* imatrix) {
    for_each_super_block<V, SuperBlock<kQ2KBlockBytes, q2_k_super_block<V>>>(src, dst, nrows,
                                                                             n_per_row, imatrix);
}

}  // namespace
}  // namespace rebox::quant::lanes
