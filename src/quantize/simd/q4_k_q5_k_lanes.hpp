// Q4_K and Q5_K in lanes (ggml's quantize_row_q{4,5}_K_ref and quantize_row_q{4,5}_K_impl, which
// differ only in nmax, the ref search's constants and the code packing): lane k runs the scale
// search of sub-block k (32 values) of a super-block (16 lanes: of two consecutive super-blocks),
// then requantizes it; the per-super-block steps (max of the scales, 6-bit packing,
// make_qp_quants) stay scalar, as in ggml.
#pragma once

#include <cstdint>
#include <cstring>

#include "quantize/simd/k_quant_blocks.hpp"
#include "quantize/simd/lane_search.hpp"

namespace rebox::quant::lanes {
namespace {

inline void q4_k_pack_codes(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < 256; j += 64) {
        for (int l = 0; l < 32; ++l) qs[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
        qs += 32;
    }
}

// Q5_K: bit 4 of codes n+j / n+j+32 goes to qh[j] bits m1 / m2 (shifting by 2 per 64-chunk).
inline void q5_k_pack_codes(const uint8_t* L, uint8_t* qh, uint8_t* ql) {
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < 256; n += 64) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j], l2 = L[n + j + 32];
            if (l1 > 15) l1 -= 16, qh[j] |= m1;
            if (l2 > 15) l2 -= 16, qh[j] |= m2;
            ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
        }
        m1 = static_cast<uint8_t>(m1 << 2), m2 = static_cast<uint8_t>(m2 << 2);
        ql += 32;
    }
}

struct Q4K {
    static constexpr int kBlockBytes = 144;  // d, dmin, scales[12], qs[128]
    static constexpr int kNmax = 15;
    static constexpr float kRefRmin = -1.f, kRefRdelta = 0.1f;
    static constexpr int kRefNstep = 20;
    static void pack(const uint8_t* L, uint8_t* block) { q4_k_pack_codes(L, block + 16); }
};

struct Q5K {
    static constexpr int kBlockBytes = 176;  // d, dmin, scales[12], qh[32], qs[128]
    static constexpr int kNmax = 31;
    static constexpr float kRefRmin = -0.5f, kRefRdelta = 0.1f;
    static constexpr int kRefNstep = 15;
    static void pack(const uint8_t* L, uint8_t* block) {
        q5_k_pack_codes(L, block + 16, block + 48);
    }
};

// Requantizes the lanes' sub-blocks with the stored fp16 d/dmin and 6-bit scales (ggml's second
// pass): lane k is sub-block first + k of the step, in super-block (first + k) / 8 of `blocks`;
// lanes past `subblocks` (the step's last super-block is missing) keep their codes.
template <class V, class T>
void q4_k_requant(const typename V::F* x, int first, int subblocks, const uint8_t* blocks,
                  typename V::F* L) {
    constexpr int W = V::kWidth;
    alignas(32) float d_lane[W], dm_lane[W];
    for (int k = 0; k < W; ++k) {
        const int j = first + k;
        d_lane[k] = dm_lane[k] = 0.f;
        if (j >= subblocks) continue;
        const uint8_t* block = blocks + T::kBlockBytes * (j / 8);
        uint8_t sc, m;
        unpack_scale_min_k4(j % 8, block + 4, &sc, &m);
        d_lane[k] = load_half(block) * static_cast<float>(sc);
        dm_lane[k] = load_half(block + 2) * static_cast<float>(m);
    }
    const typename V::F dv = V::load(d_lane), dmv = V::load(dm_lane);
    const typename V::F skip = V::eq(dv, V::zero());  // if (!d) continue: keep the search's codes
    const typename V::F lo = V::zero(), hi = V::set1(static_cast<float>(T::kNmax));
    for (int i = 0; i < 32; ++i) {
        const typename V::F l = nearest_int_clamped<V>(V::div(V::add(x[i], dmv), dv), lo, hi);
        L[i] = V::select(skip, l, L[i]);
    }
}

// The per-super-block scalar step of ggml: the 6-bit scales and mins of the 8 sub-blocks and the
// fp16 d/dmin, from the search's scales / mins (and the imatrix path's sub-block weights sw).
template <class T>
void q4_k_pack_scales(const float* scales, const float* mins, const float* sw, bool imatrix,
                      uint8_t* block) {
    std::memset(block, 0, T::kBlockBytes);
    uint8_t* packed_scales = block + 4;
    if (!imatrix) {
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < 8; ++j) {
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
        const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
        for (int j = 0; j < 8; ++j) {
            uint8_t ls = static_cast<uint8_t>(nearest_int_scalar(inv_scale * scales[j]));
            uint8_t lm = static_cast<uint8_t>(nearest_int_scalar(inv_min * mins[j]));
            ls = 63 < ls ? 63 : ls;
            lm = 63 < lm ? 63 : lm;
            pack_scale_min_k4(j, ls, lm, packed_scales);
        }
        store_half(block, max_scale / 63.f);
        store_half(block + 2, max_min / 63.f);
    } else {
        uint8_t Ls[8], Lm[8];
        const float d_block = make_qp_quants_scalar(8, 63, scales, Ls, sw);
        const float m_block = make_qp_quants_scalar(8, 63, mins, Lm, sw);
        // Q5_K takes MIN(63, .) here, Q4_K does not: make_qp_quants(.., 63, ..) never exceeds 63.
        for (int j = 0; j < 8; ++j) pack_scale_min_k4(j, Ls[j], Lm[j], packed_scales);
        store_half(block, d_block);
        store_half(block + 2, m_block);
    }
}

// `count` (1 .. kSuperBlocksPerStep) consecutive super-blocks of one row; imatrix == nullptr is
// the _ref path, else the _impl path with these super-blocks' weights and each one's sum of x^2.
template <class V, class T>
void q4_k_super_blocks(const float* x, const float* imatrix, const float* sum_x2, int count,
                       uint8_t* blocks) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kSuper = kSuperBlocksPerStep<V>;
    constexpr int kGroups = 8 * kSuper / W;
    const int subblocks = 8 * count;
    F xt[kGroups][32], Lt[kGroups][32];
    alignas(32) float scales[8 * kSuper], mins[8 * kSuper], sw[8 * kSuper];
    for (int g = 0; g < kGroups; ++g) {
        F* xg = xt[g];
        const int lanes = subblocks - W * g < W ? subblocks - W * g : W;
        transpose_in<V, 32>(x + 32 * W * g, lanes, xg);
        F w[32];
        if (!imatrix) {
            F sum_x2_lanes = V::zero();
            for (int i = 0; i < 32; ++i) sum_x2_lanes = V::add(sum_x2_lanes, V::mul(xg[i], xg[i]));
            const F av_x = V::sqrt(V::div(sum_x2_lanes, V::set1(32.f)));
            for (int i = 0; i < 32; ++i) w[i] = V::add(av_x, V::abs(xg[i]));
            F the_min;
            const F scale = make_qkx_lanes<V, 32, false, false>(
                xg, w, T::kNmax, T::kRefRmin, T::kRefRdelta, T::kRefNstep, Lt[g], &the_min);
            V::store(scales + W * g, scale);
            V::store(mins + W * g, the_min);
        } else {
            F qw[32];
            transpose_in<V, 32>(imatrix + 32 * W * g, lanes, qw);
            alignas(32) float s2_lane[W];  // sigma2 = 2*sum_x2/QK_K of each lane's super-block
            for (int k = 0; k < W; ++k) {
                const int j = W * g + k;
                s2_lane[k] = j < subblocks ? 2 * sum_x2[j / 8] / 256 : 0.f;
            }
            const F s2 = V::load(s2_lane);
            F sumw = V::zero();
            for (int i = 0; i < 32; ++i) {
                w[i] = V::mul(qw[i], V::sqrt(V::add(s2, V::mul(xg[i], xg[i]))));
                sumw = V::add(sumw, w[i]);
            }
            V::store(sw + W * g, sumw);
            F the_min;
            const F scale = make_qkx_lanes<V, 32, false, true>(xg, w, T::kNmax, -0.9f, 0.05f, 36,
                                                               Lt[g], &the_min);
            V::store(scales + W * g, scale);
            V::store(mins + W * g, the_min);
        }
    }
    for (int s = 0; s < count; ++s)
        q4_k_pack_scales<T>(scales + 8 * s, mins + 8 * s, sw + 8 * s, imatrix != nullptr,
                            blocks + T::kBlockBytes * s);
    alignas(32) uint8_t L[256 * kSuper];
    for (int g = 0; g < kGroups; ++g) {
        q4_k_requant<V, T>(xt[g], W * g, subblocks, blocks, Lt[g]);
        const int lanes = subblocks - W * g < W ? subblocks - W * g : W;
        if (lanes > 0) transpose_codes_out<V, 32>(Lt[g], lanes, L + 32 * W * g);
    }
    for (int s = 0; s < count; ++s) T::pack(L + 256 * s, blocks + T::kBlockBytes * s);
}

// quantize_q4_K / quantize_q5_K.
template <class V, class T>
void q4_k_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
               const float* imatrix) {
    for_each_super_block_step<V, T::kBlockBytes>(src, dst, nrows, n_per_row, imatrix,
                                                 q4_k_super_blocks<V, T>);
}

}  // namespace
}  // namespace rebox::quant::lanes
