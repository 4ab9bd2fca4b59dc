// IQ2_XXS (2.06 bpw) and IQ2_XS (2.31 bpw): ggml's quantize_row_iq2_xxs_impl / _xs_impl, which
// always take an imatrix. Per 256-value super-block, weights w = qw * sqrt(sigma2 + x^2) (sigma2 =
// mean x^2); per group of 8 values the signs are split off (an even number of them: the value
// with the least w*x^2 keeps the wrong sign when the count is odd), and the |x| are fitted with a
// grid point of 8 codes (2l+1, l in 0..2) times a sub-block scale: 13 (XXS, per 32 values,
// starting from make_qp_quants) or 19 (XS, per 16 values) trial scales, an off-grid point
// replaced by its nearest neighbour (iq_tables). The sub-block scales become 4-bit multiples
// of max_scale / 31. Inputs that make ggml abort (NaN/Inf reaching the search) throw instead.
#include <cmath>
#include <cstring>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"
#include "quantize/iq_tables.hpp"
#include "quantize/scale_search.hpp"
#include "rebox/error.hpp"

namespace rebox::quant {

namespace iq2_quants {

constexpr int kQK = 256;
constexpr int kMaxQ = 3;

float fmax_ggml(float a, float b) { return a > b ? a : b; }  // ggml's MAX(a, b)

// Splits the signs off 8 values: xval = |x| but for one value when the count of negatives is odd
// (the one with the least weight * x^2 keeps its sign); returns the 7 stored sign bits.
uint8_t split_signs(const float* xb, const float* weight, float* xval) {
    int nflip = 0;
    uint8_t s = 0;
    for (int i = 0; i < 8; ++i) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            ++nflip;
            s = static_cast<uint8_t>(s | (1 << i));
        }
    }
    if (nflip % 2) {
        int imin = 0;
        float min = weight[0] * xb[0] * xb[0];
        for (int i = 1; i < 8; ++i) {
            const float ax = weight[i] * xb[i] * xb[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s = static_cast<uint8_t>(s ^ (1 << imin));
    }
    return static_cast<uint8_t>(s & 127);
}

// Codes of 8 values at inverse scale id (nearest_int(0.5*(id*x - 1)) clamped to 0..2) and the key.
int codes_at(const float* xval, float id, int8_t* L) {
    int key = 0;
    for (int i = 0; i < 8; ++i) {
        int l = nearest_int(0.5f * (id * xval[i] - 1));
        l = l < 0 ? 0 : (l > kMaxQ - 1 ? kMaxQ - 1 : l);
        L[i] = static_cast<int8_t>(l);
        key |= l << (2 * i);
    }
    return key;
}

// Codes on the grid for 8 values at this scale; true when the first guess was on the grid.
bool snap_to_grid(const IqTables& t, const float* xval, const float* waux, float id, float scale,
                  int8_t* L, const char* type) {
    const int key = codes_at(xval, id, L);
    if (t.map[static_cast<size_t>(key)] >= 0) return true;
    if (iq_best_neighbour(t, key, xval, waux, scale, L) < 0) iq_off_grid(type);
    return false;
}

float super_block_sigma2(const float* xbl) {
    float sumx2 = 0;
    for (int i = 0; i < kQK; ++i) sumx2 += xbl[i] * xbl[i];
    return sumx2 / kQK;
}

void sub_block_weights(int n, const float* xb, const float* qw, float sigma2, float* weight,
                       float* waux) {
    for (int i = 0; i < n; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    for (int i = 0; i < n; ++i) waux[i] = std::sqrt(weight[i]);
}

// The 4-bit sub-block scale code: nearest_int(0.5*(scale/d - 1)) clamped to 0..15.
int scale_code(float id, float scale) {
    const int l = nearest_int(0.5f * (id * scale - 1));
    return l < 0 ? 0 : (l > 15 ? 15 : l);
}

// The search of IQ2_XS and IQ2_S over 16 |x| values (two groups of 8): 19 trial scales
// (2*kMaxQ - 1 + is*0.1) / max, then the refit of the groups left off the grid. Returns the
// scale; L holds the codes.
float search16(const IqTables& t, const float* weight, const float* xval, const float* waux,
               float max, int8_t* L, const char* type) {
    int8_t Laux[16];
    bool on_grid[2] = {true, true}, on_grid_aux[2];
    float best = 0;
    float scale = max / (2 * kMaxQ - 1);
    for (int is = -9; is <= 9; ++is) {
        const float id = (2 * kMaxQ - 1 + static_cast<float>(is) * 0.1f) / max;
        const float this_scale = 1 / id;
        for (int k = 0; k < 2; ++k)
            on_grid_aux[k] =
                snap_to_grid(t, xval + 8 * k, waux + 8 * k, id, this_scale, Laux + 8 * k, type);
        float sumqx, sumq2;
        iq_weighted_sums(16, weight, xval, Laux, sumqx, sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            std::memcpy(L, Laux, 16);
            on_grid[0] = on_grid_aux[0];
            on_grid[1] = on_grid_aux[1];
        }
    }
    if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 2; ++k) {
            if (on_grid[k]) continue;
            snap_to_grid(t, xval + 8 * k, waux + 8 * k, id, scale, L + 8 * k, type);
        }
        float sumqx, sumq2;
        iq_weighted_sums(16, weight, xval, L, sumqx, sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    return scale;
}

}  // namespace iq2_quants

void quantize_iq2_xxs_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    using namespace iq2_quants;
    const IqTables& t = iq_tables(IqGrid::iq2_xxs);
    float scales[kQK / 32], weight[32], xval[32], waux[32];
    int8_t L[32], Laux[32];
    uint8_t block_signs[4];
    uint32_t q2[2 * (kQK / 32)];
    for (int64_t ibl = 0; ibl < n_per_row / kQK; ++ibl, y += 66) {
        std::memset(q2, 0, sizeof q2);
        float max_scale = 0;
        const float* xbl = x + kQK * ibl;
        const float sigma2 = super_block_sigma2(xbl);
        for (int ib = 0; ib < kQK / 32; ++ib) {
            const float* xb = xbl + 32 * ib;
            sub_block_weights(32, xb, qw + kQK * ibl + 32 * ib, sigma2, weight, waux);
            for (int k = 0; k < 4; ++k)
                block_signs[k] = split_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = fmax_ggml(max, xval[i]);
            if (max < kGroupMaxEps) {
                scales[ib] = 0;
                continue;
            }
            float scale =
                make_qp_quants(32, kMaxQ + 1, xval, reinterpret_cast<uint8_t*>(L), weight);
            const float eff_max = scale * kMaxQ;
            if (eff_max <= 0) {
                scales[ib] = 0;
                continue;
            }
            float best = 0;
            for (int is = -6; is <= 6; ++is) {
                const float id = (2 * kMaxQ - 1 + static_cast<float>(is) * 0.1f) / eff_max;
                const float this_scale = 1 / id;
                for (int k = 0; k < 4; ++k)
                    snap_to_grid(t, xval + 8 * k, waux + 8 * k, id, this_scale, Laux + 8 * k,
                                 "IQ2_XXS");
                float sumqx, sumq2;
                iq_weighted_sums(32, weight, xval, Laux, sumqx, sumq2);
                if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    std::memcpy(L, Laux, 32);
                }
            }
            if (scale > 0) {
                const float id = 1 / scale;
                for (int k = 0; k < 4; ++k)
                    snap_to_grid(t, xval + 8 * k, waux + 8 * k, id, scale, L + 8 * k, "IQ2_XXS");
                float sumqx, sumq2;
                iq_weighted_sums(32, weight, xval, L, sumqx, sumq2);
                if (sumq2 > 0) scale = sumqx / sumq2;
            }
            if (scale < 0) {
                scale = -scale;
                for (auto& s : block_signs) s = static_cast<uint8_t>(~s & 127);
            }
            for (int k = 0; k < 4; ++k) {
                const int grid_index = iq_grid_index(t, L + 8 * k, "IQ2_XXS");
                q2[2 * ib + 0] |= static_cast<uint32_t>(grid_index) << (8 * k);
                q2[2 * ib + 1] |= static_cast<uint32_t>(block_signs[k]) << (7 * k);
            }
            if (!(scale >= 0)) iq_off_grid("IQ2_XXS");  // ggml: GGML_ASSERT(scale >= 0)
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }
        std::memset(y, 0, 66);
        if (!max_scale) continue;
        const float d = max_scale / 31;
        store_fp16(y, d);
        const float id = 1 / d;
        for (int ib = 0; ib < kQK / 32; ++ib)
            q2[2 * ib + 1] |= static_cast<uint32_t>(scale_code(id, scales[ib])) << 28;
        for (int i = 0; i < 16; ++i) store_u32(y + 2 + 4 * i, q2[i]);
    }
}

void quantize_iq2_xs_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    using namespace iq2_quants;
    const IqTables& t = iq_tables(IqGrid::iq2_xs);
    float scales[kQK / 16], weight[16], xval[16], waux[16];
    int8_t L[16];
    uint8_t block_signs[2];
    uint16_t q2[2 * (kQK / 16)];
    for (int64_t ibl = 0; ibl < n_per_row / kQK; ++ibl, y += 74) {
        std::memset(q2, 0, sizeof q2);
        float max_scale = 0;
        const float* xbl = x + kQK * ibl;
        const float sigma2 = super_block_sigma2(xbl);
        for (int ib = 0; ib < kQK / 16; ++ib) {
            const float* xb = xbl + 16 * ib;
            sub_block_weights(16, xb, qw + kQK * ibl + 16 * ib, sigma2, weight, waux);
            for (int k = 0; k < 2; ++k)
                block_signs[k] = split_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 16; ++i) max = fmax_ggml(max, xval[i]);
            std::memset(L, 0, 16);
            if (max < kGroupMaxEps) {
                scales[ib] = 0;
                continue;
            }
            float scale = search16(t, weight, xval, waux, max, L, "IQ2_XS");
            if (scale < 0) {
                scale = -scale;
                for (auto& s : block_signs) s = static_cast<uint8_t>(~s & 127);
            }
            for (int k = 0; k < 2; ++k) {
                const int grid_index = iq_grid_index(t, L + 8 * k, "IQ2_XS");
                q2[2 * ib + k] = static_cast<uint16_t>(grid_index | (block_signs[k] << 9));
            }
            if (!(scale >= 0)) iq_off_grid("IQ2_XS");
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }
        std::memset(y, 0, 74);
        if (!max_scale) continue;
        const float d = max_scale / 31;
        store_fp16(y, d);
        const float id = 1 / d;
        for (int ib = 0; ib < kQK / 16; ++ib) {
            const int l = scale_code(id, scales[ib]);
            y[66 + ib / 2] = static_cast<uint8_t>(y[66 + ib / 2] | (ib % 2 == 0 ? l : l << 4));
        }
        for (int i = 0; i < 32; ++i) {
            y[2 + 2 * i] = static_cast<uint8_t>(q2[i] & 0xff);
            y[3 + 2 * i] = static_cast<uint8_t>(q2[i] >> 8);
        }
    }
}

void quantize_iq2_s_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    using namespace iq2_quants;
    const IqTables& t = iq_tables(IqGrid::iq2_s);
    float scales[kQK / 16], weight[16], xval[16], waux[16];
    int8_t L[16];
    uint8_t block_signs[2];
    // block_iq2_s: d, qs[64] (32 low bytes of the grid indices, then 32 sign bytes), qh[8] (the
    // indices' bits 8..9, four per byte), scales[8].
    for (int64_t ibl = 0; ibl < n_per_row / kQK; ++ibl, y += 82) {
        std::memset(y, 0, 82);
        float max_scale = 0;
        const float* xbl = x + kQK * ibl;
        float sumx2 = 0;
        for (int i = 0; i < kQK; ++i) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / kQK;
        for (int ib = 0; ib < kQK / 16; ++ib) {
            const float* xb = xbl + 16 * ib;
            if (qw != nullptr) {
                const float* qwb = qw + kQK * ibl + 16 * ib;
                for (int i = 0; i < 16; ++i) weight[i] = qwb[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < 16; ++i) weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
            }
            for (int i = 0; i < 16; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 2; ++k) {
                uint8_t s = 0;
                for (int i = 0; i < 8; ++i) {
                    const float v = xb[8 * k + i];
                    xval[8 * k + i] = v >= 0 ? v : -v;
                    if (!(v >= 0)) s = static_cast<uint8_t>(s | (1 << i));
                }
                block_signs[k] = s;
            }
            float max = xval[0];
            for (int i = 1; i < 16; ++i) max = fmax_ggml(max, xval[i]);
            std::memset(L, 0, 16);
            if (max < 1e-8f) {  // GROUP_MAX_EPS_IQ2_S
                scales[ib] = 0;
                continue;
            }
            float scale = search16(t, weight, xval, waux, max, L, "IQ2_S");
            if (scale < 0) {
                scale = -scale;
                for (auto& s : block_signs) s = static_cast<uint8_t>(~s);
            }
            for (int k = 0; k < 2; ++k) {
                const int grid_index = iq_grid_index(t, L + 8 * k, "IQ2_S");
                const int i8 = 2 * ib + k;
                y[2 + i8] = static_cast<uint8_t>(grid_index & 255);
                y[66 + i8 / 4] =
                    static_cast<uint8_t>(y[66 + i8 / 4] | ((grid_index >> 8) << (2 * (i8 % 4))));
                y[2 + 32 + i8] = block_signs[k];
            }
            if (!(scale >= 0)) iq_off_grid("IQ2_S");
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }
        if (!max_scale) continue;
        const float d = max_scale / 31;
        store_fp16(y, d * 0.9875f);
        const float id = 1 / d;
        for (int ib = 0; ib < kQK / 16; ++ib) {
            const int l = scale_code(id, scales[ib]);
            y[74 + ib / 2] = static_cast<uint8_t>(y[74 + ib / 2] | (ib % 2 == 0 ? l : l << 4));
        }
    }
}

}  // namespace rebox::quant
