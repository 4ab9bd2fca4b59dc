// Q6_K in lanes (ggml's quantize_row_q6_K_ref and quantize_row_q6_K_impl): lane k runs
// make_qx_quants(16, 32, ...) for sub-block k of a super-block, then requantizes it; the scale
// packing per super-block stays scalar, as in ggml.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "quantize/simd/k_quant_blocks.hpp"
#include "quantize/simd/lane_search.hpp"

namespace rebox::quant::lanes {
namespace {

constexpr int kQ6KBlockBytes = 210;  // ql[128], qh[64], scales[16], d

inline void q6_k_pack_codes(const uint8_t* L, uint8_t* block) {
    uint8_t* ql = block;
    uint8_t* qh = block + 128;
    for (int j = 0; j < 256; j += 128) {
        for (int l = 0; l < 32; ++l) {
            const uint8_t q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF;
            const uint8_t q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
            ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
            ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
            qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                         ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
        }
        ql += 64;
        qh += 32;
    }
}

// One super-block; imatrix (this super-block's 256 weights) or nullptr (weights x*x).
template <class V>
void q6_k_super_block(const float* x, const float* imatrix, uint8_t* block) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kGroups = 16 / W;
    F xt[kGroups][16], Lt[kGroups][16];
    alignas(32) float scales[16];
    for (int g = 0; g < kGroups; ++g) {
        transpose_in<V, 16>(x + 16 * W * g, W, xt[g]);
        F qw[16];
        if (imatrix) transpose_in<V, 16>(imatrix + 16 * W * g, W, qw);
        V::store(scales + W * g, make_qx_lanes<V, 16>(xt[g], imatrix ? qw : nullptr, 32, Lt[g]));
    }
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
        const float abs_scale = std::fabs(scales[ib]);
        if (abs_scale > max_abs_scale) {
            max_abs_scale = abs_scale;
            max_scale = scales[ib];
        }
    }
    std::memset(block, 0, kQ6KBlockBytes);
    if (max_abs_scale < kGroupMaxEps) return;  // d = fp16(0.f) = 0: the whole block is zero
    int8_t* block_scales = reinterpret_cast<int8_t*>(block + 192);
    const float iscale = -128.f / max_scale;
    store_half(block + 208, 1 / iscale);
    for (int ib = 0; ib < 16; ++ib) {
        const int l = nearest_int_scalar(iscale * scales[ib]);
        block_scales[ib] = static_cast<int8_t>(127 < l ? 127 : l);
    }
    const float d = load_half(block + 208);
    alignas(32) uint8_t L[256];
    for (int g = 0; g < kGroups; ++g) {
        alignas(32) float d_lane[W];
        for (int k = 0; k < W; ++k) d_lane[k] = d * static_cast<float>(block_scales[W * g + k]);
        requantize_symmetric<V, 16>(xt[g], V::load(d_lane), -32.f, 31.f, 32.f, Lt[g]);
        transpose_codes_out<V, 16>(Lt[g], W, L + 16 * W * g);
    }
    q6_k_pack_codes(L, block);
}

template <class V>
void q6_k_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
               const float* imatrix) {
    const int64_t blocks = nrows * (n_per_row / 256);
    const int64_t blocks_per_row = n_per_row / 256;
    for (int64_t b = 0; b < blocks; ++b) {
        const float* qw = imatrix ? imatrix + 256 * (b % blocks_per_row) : nullptr;
        q6_k_super_block<V>(src + 256 * b, qw, dst + kQ6KBlockBytes * b);
    }
}

}  // namespace
}  // namespace rebox::quant::lanes
