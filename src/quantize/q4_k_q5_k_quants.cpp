// Q4_K and Q5_K (8 sub-blocks of 32, 4- or 5-bit codes, 6-bit scales and mins): ggml's reference
// search (make_qkx2 with weights sqrt(mean x^2 of the sub-block) + |x|) and its imatrix search
// (make_qkx3 with imatrix * sqrt(sigma2 + x^2), sigma2 = 2 * mean x^2 of the super-block, then
// make_qp on the scales and mins). The two types differ in nmax, the reference search's
// parameters, the MIN(63) of the imatrix path and the packing of bit 4.
#include <cmath>
#include <cstring>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"
#include "quantize/imatrix_weights.hpp"
#include "quantize/k_block_layout.hpp"
#include "quantize/scale_search.hpp"

namespace rebox::quant {

namespace {

struct KVariant {
    int nmax;          // 15 (Q4_K) or 31 (Q5_K)
    int block_bytes;   // 144 or 176
    float ref_rmin;    // reference search: -1.0 / -0.5
    int ref_nstep;     // 20 / 15
    bool clamp_qp_63;  // imatrix path applies MIN(63) to the make_qp codes (Q5_K only)
};

constexpr KVariant kQ4K{15, 144, -1.f, 20, false};
constexpr KVariant kQ5K{31, 176, -0.5f, 15, true};

// Recomputes the codes from the stored d, dmin and 6-bit scales/mins, then packs them.
void requantize_and_pack(const KVariant& v, const float* x, uint8_t* y, uint8_t* L) {
    const float d_all = load_fp16(y);
    const float dmin_all = load_fp16(y + 2);
    for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        unpack_scale_min_k4(j, y + 4, &sc, &m);
        const float d = d_all * static_cast<float>(sc);
        if (d == 0.f) continue;
        const float dm = dmin_all * static_cast<float>(m);
        for (int ii = 0; ii < 32; ++ii) {
            const int l = nearest_int((x[32 * j + ii] + dm) / d);
            L[32 * j + ii] = static_cast<uint8_t>(l < 0 ? 0 : (l > v.nmax ? v.nmax : l));
        }
    }
    if (v.nmax == 15) {
        uint8_t* q = y + 16;
        for (int j = 0; j < kSuperBlock; j += 64, q += 32) {
            for (int l = 0; l < 32; ++l)
                q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
        }
        return;
    }
    uint8_t* qh = y + 16;
    uint8_t* ql = y + 48;
    std::memset(qh, 0, 32);
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < kSuperBlock; n += 64, ql += 32) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j];
            if (l1 > 15) {
                l1 -= 16;
                qh[j] = static_cast<uint8_t>(qh[j] | m1);
            }
            int l2 = L[n + j + 32];
            if (l2 > 15) {
                l2 -= 16;
                qh[j] = static_cast<uint8_t>(qh[j] | m2);
            }
            ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
        }
        m1 = static_cast<uint8_t>(m1 << 2);
        m2 = static_cast<uint8_t>(m2 << 2);
    }
}

void quantize_ref(const KVariant& v, const float* x, uint8_t* y, int64_t nblocks) {
    uint8_t L[kSuperBlock];
    uint8_t Laux[32];
    float weights[32];
    float mins[8];
    float scales[8];
    for (int64_t i = 0; i < nblocks; ++i, x += kSuperBlock, y += v.block_bytes) {
        float max_scale = 0;
        float max_min = 0;
        for (int j = 0; j < 8; ++j) {
            float sum_x2 = 0;
            for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
            const float av_x = std::sqrt(sum_x2 / 32);
            for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
            scales[j] = make_qkx_quants(32, v.nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux,
                                        v.ref_rmin, 0.1f, v.ref_nstep, false);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
        const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
        for (int j = 0; j < 8; ++j) {
            // ggml keeps nearest_int's result in a uint8_t, then applies MIN(63).
            auto ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
            auto lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
            ls = ls < 63 ? ls : 63;
            lm = lm < 63 ? lm : 63;
            pack_scale_min_k4(j, ls, lm, y + 4);
        }
        store_fp16(y, max_scale / 63.f);
        store_fp16(y + 2, max_min / 63.f);
        requantize_and_pack(v, x, y, L);
    }
}

void quantize_weighted(const KVariant& v, const float* x, uint8_t* y, int64_t n_per_row,
                       const float* qw) {
    uint8_t L[kSuperBlock];
    uint8_t Laux[32];
    uint8_t Ls[8], Lm[8];
    float weights[32];
    float sw[8];
    float mins[8];
    float scales[8];
    for (int64_t i = 0; i < n_per_row / kSuperBlock; ++i, x += kSuperBlock, y += v.block_bytes) {
        const float sigma2 = 2 * super_block_sum_x2(x) / kSuperBlock;
        for (int j = 0; j < 8; ++j) {
            sw[j] = imatrix_weights(x + 32 * j, qw + kSuperBlock * i + 32 * j, sigma2, 32, weights);
            scales[j] = make_qkx_quants(32, v.nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux,
                                        -0.9f, 0.05f, 36, false);
        }
        const float d_block = make_qp_quants(8, 63, scales, Ls, sw);
        const float m_block = make_qp_quants(8, 63, mins, Lm, sw);
        for (int j = 0; j < 8; ++j) {
            uint8_t ls = Ls[j];
            uint8_t lm = Lm[j];
            if (v.clamp_qp_63) {
                ls = ls < 63 ? ls : 63;
                lm = lm < 63 ? lm : 63;
            }
            pack_scale_min_k4(j, ls, lm, y + 4);
        }
        store_fp16(y, d_block);
        store_fp16(y + 2, m_block);
        requantize_and_pack(v, x, y, L);
    }
}

}  // namespace

void quantize_q4_k_ref(const float* x, uint8_t* y, int64_t nblocks) {
    quantize_ref(kQ4K, x, y, nblocks);
}
void quantize_q4_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    quantize_weighted(kQ4K, x, y, n_per_row, qw);
}
void quantize_q5_k_ref(const float* x, uint8_t* y, int64_t nblocks) {
    quantize_ref(kQ5K, x, y, nblocks);
}
void quantize_q5_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    quantize_weighted(kQ5K, x, y, n_per_row, qw);
}

}  // namespace rebox::quant
