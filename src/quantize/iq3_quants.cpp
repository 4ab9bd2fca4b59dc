// IQ3_XXS (3.06 bpw) and IQ3_S (3.44 bpw): ggml's quantize_row_iq3_xxs_impl / _s_impl, with an
// imatrix (w = qw * sqrt(2 mean x^2 + x^2)) or without one (w = x^2). Per 32 values: |x| on a
// grid of points of 4 codes (2l+1, l in 0..7) times a sub-block scale, over 31 (XXS) or 19 (S)
// trial scales, an off-grid point replaced by its nearest neighbour (iq_tables). IQ3_XXS keeps 7
// sign bits per 8 values (an even count, as IQ2_XXS); IQ3_S keeps all 8 and a 9-bit grid index.
// As in ggml, an IQ3_S sub-block of zeros does not advance the qs / signs write position, so the
// following sub-blocks' codes are stored that many slots earlier. Inputs that make ggml abort
// (NaN/Inf reaching the search) throw instead.
#include <cmath>
#include <cstring>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"
#include "quantize/iq_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::quant {

namespace iq3_quants {

constexpr int kQK = 256;
constexpr int kMaxQ = 8;

float fmax_ggml(float a, float b) { return a > b ? a : b; }

// Codes of 4 values on the grid at inverse scale id; true when the first guess is on it.
bool snap4(const IqTables& t, const float* xval, const float* waux, float id, float scale,
           int8_t* L, const char* type) {
    int key = 0;
    for (int i = 0; i < 4; ++i) {
        int l = nearest_int(0.5f * (id * xval[i] - 1));
        l = l < 0 ? 0 : (l > kMaxQ - 1 ? kMaxQ - 1 : l);
        L[i] = static_cast<int8_t>(l);
        key |= l << (3 * i);
    }
    if (t.map[static_cast<size_t>(key)] >= 0) return true;
    if (iq_best_neighbour(t, key, xval, waux, scale, L) < 0) iq_off_grid(type);
    return false;
}

void weights32(const float* xb, const float* qw, float sigma2, float* weight, float* waux) {
    if (qw != nullptr) {
        for (int i = 0; i < 32; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < 32; ++i) weight[i] = xb[i] * xb[i];
    }
    for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
}

float sigma2_of(const float* xbl) {
    float sumx2 = 0;
    for (int i = 0; i < kQK; ++i) sumx2 += xbl[i] * xbl[i];
    return 2 * sumx2 / kQK;
}

int scale_code(float id, float scale) {
    const int l = nearest_int(0.5f * (id * scale - 1));
    return l < 0 ? 0 : (l > 15 ? 15 : l);
}

// The shared search of both types over one sub-block of 32 |x| values: the trial scales
// (2*kMaxQ - 1 + is*0.2) / max for is in [-range, range], then the refit of the off-grid groups
// (all groups when `refit_all`). Returns the scale; L holds the 8 groups' codes.
float search32(const IqTables& t, const float* weight, const float* xval, const float* waux,
               float max, int range, bool on_grid_start, bool refit_all, int8_t* L,
               const char* type) {
    int8_t Laux[32];
    bool on_grid[8], on_grid_aux[8];
    float best = 0;
    float scale = max / (2 * kMaxQ - 1);
    for (bool& g : on_grid) g = on_grid_start;
    for (int is = -range; is <= range; ++is) {
        const float id = (2 * kMaxQ - 1 + static_cast<float>(is) * 0.2f) / max;
        const float this_scale = 1 / id;
        for (int k = 0; k < 8; ++k)
            on_grid_aux[k] =
                snap4(t, xval + 4 * k, waux + 4 * k, id, this_scale, Laux + 4 * k, type);
        float sumqx, sumq2;
        iq_weighted_sums(32, weight, xval, Laux, sumqx, sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            std::memcpy(L, Laux, 32);
            for (int k = 0; k < 8; ++k) on_grid[k] = on_grid_aux[k];
        }
    }
    int n_not_on_grid = 0;
    for (const bool g : on_grid) n_not_on_grid += g ? 0 : 1;
    if (n_not_on_grid > 0 && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 8; ++k) {
            if (!refit_all && on_grid[k]) continue;
            snap4(t, xval + 4 * k, waux + 4 * k, id, scale, L + 4 * k, type);
        }
        float sumqx, sumq2;
        iq_weighted_sums(32, weight, xval, L, sumqx, sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    return scale;
}

}  // namespace iq3_quants

void quantize_iq3_xxs_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    using namespace iq3_quants;
    const IqTables& t = iq_tables(IqGrid::iq3_xxs);
    float scales[kQK / 32], weight[32], xval[32], waux[32];
    int8_t L[32];
    uint8_t block_signs[4];
    for (int64_t ibl = 0; ibl < n_per_row / kQK; ++ibl, y += 98) {
        uint8_t q3[96] = {};
        uint32_t scales_and_signs[8] = {};
        float max_scale = 0;
        const float* xbl = x + kQK * ibl;
        const float sigma2 = sigma2_of(xbl);
        for (int ib = 0; ib < kQK / 32; ++ib) {
            const float* xb = xbl + 32 * ib;
            weights32(xb, qw ? qw + kQK * ibl + 32 * ib : nullptr, sigma2, weight, waux);
            for (int k = 0; k < 4; ++k) {
                int nflip = 0;
                uint8_t s = 0;
                for (int i = 0; i < 8; ++i) {
                    const float v = xb[8 * k + i];
                    if (v >= 0) {
                        xval[8 * k + i] = v;
                    } else {
                        xval[8 * k + i] = -v;
                        ++nflip;
                        s = static_cast<uint8_t>(s | (1 << i));
                    }
                }
                if (nflip % 2) {
                    const float* xk = xb + 8 * k;
                    const float* wk = weight + 8 * k;
                    int imin = 0;
                    float min = wk[0] * xk[0] * xk[0];
                    for (int i = 1; i < 8; ++i) {
                        const float ax = wk[i] * xk[i] * xk[i];
                        if (ax < min) {
                            min = ax;
                            imin = i;
                        }
                    }
                    xval[8 * k + imin] = -xval[8 * k + imin];
                    s = static_cast<uint8_t>(s ^ (1 << imin));
                }
                block_signs[k] = static_cast<uint8_t>(s & 127);
            }
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = fmax_ggml(max, xval[i]);
            std::memset(L, 0, 32);
            if (max < 1e-8f) {  // GROUP_MAX_EPS_IQ3_XXS
                scales[ib] = 0;
                continue;
            }
            float scale = search32(t, weight, xval, waux, max, 15, true, false, L, "IQ3_XXS");
            if (scale < 0) {
                scale = -scale;
                for (auto& s : block_signs) s = static_cast<uint8_t>(~s & 127);
            }
            for (int k = 0; k < 8; ++k)
                q3[8 * ib + k] = static_cast<uint8_t>(iq_grid_index(t, L + 4 * k, "IQ3_XXS"));
            scales_and_signs[ib] = static_cast<uint32_t>(block_signs[0]) |
                                   (static_cast<uint32_t>(block_signs[1]) << 7) |
                                   (static_cast<uint32_t>(block_signs[2]) << 14) |
                                   (static_cast<uint32_t>(block_signs[3]) << 21);
            if (!(scale >= 0)) iq_off_grid("IQ3_XXS");
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }
        std::memset(y, 0, 98);
        if (!max_scale) continue;
        const float d = max_scale / 31;
        store_fp16(y, d * 1.0125f);
        const float id = 1 / d;
        for (int ib = 0; ib < kQK / 32; ++ib)
            scales_and_signs[ib] |= static_cast<uint32_t>(scale_code(id, scales[ib])) << 28;
        std::memcpy(y + 2, q3, 64);
        for (int ib = 0; ib < 8; ++ib) store_u32(y + 66 + 4 * ib, scales_and_signs[ib]);
    }
}

void quantize_iq3_s_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    using namespace iq3_quants;
    const IqTables& t = iq_tables(IqGrid::iq3_s);
    float scales[kQK / 32], weight[32], xval[32], waux[32];
    int8_t L[32];
    uint8_t block_signs[4];
    // block_iq3_s: d, qs[64], qh[8], signs[32], scales[4].
    for (int64_t ibl = 0; ibl < n_per_row / kQK; ++ibl, y += 110) {
        std::memset(y, 0, 110);
        uint8_t* qs = y + 2;
        uint8_t* qh = y + 66;
        uint8_t* signs = y + 74;
        float max_scale = 0;
        const float* xbl = x + kQK * ibl;
        const float sigma2 = sigma2_of(xbl);
        for (int ib = 0; ib < kQK / 32; ++ib) {
            const float* xb = xbl + 32 * ib;
            weights32(xb, qw ? qw + kQK * ibl + 32 * ib : nullptr, sigma2, weight, waux);
            for (int k = 0; k < 4; ++k) {
                uint8_t s = 0;
                for (int i = 0; i < 8; ++i) {
                    const float v = xb[8 * k + i];
                    if (v >= 0) {
                        xval[8 * k + i] = v;
                    } else {
                        xval[8 * k + i] = -v;
                        s = static_cast<uint8_t>(s | (1 << i));
                    }
                }
                block_signs[k] = s;
            }
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = fmax_ggml(max, xval[i]);
            std::memset(L, 0, 32);
            if (!max) {
                scales[ib] = 0;
                continue;  // qs and signs stay where they are, as in ggml
            }
            float scale = search32(t, weight, xval, waux, max, 9, false, true, L, "IQ3_S");
            if (scale < 0) {
                scale = -scale;
                for (auto& s : block_signs) s = static_cast<uint8_t>(~s);
            }
            for (int k = 0; k < 8; ++k) {
                const int grid_index = iq_grid_index(t, L + 4 * k, "IQ3_S");
                qs[k] = static_cast<uint8_t>(grid_index & 255);
                const int slot = ib * 8 + k;
                qh[slot / 8] =
                    static_cast<uint8_t>(qh[slot / 8] | ((grid_index >> 8) << (slot % 8)));
            }
            qs += 8;
            for (int k = 0; k < 4; ++k) signs[k] = block_signs[k];
            signs += 4;
            if (!(scale >= 0)) iq_off_grid("IQ3_S");
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }
        if (!max_scale) continue;
        const float d = max_scale / 31;
        store_fp16(y, d * 1.033f);
        const float id = 1 / d;
        for (int ib = 0; ib < kQK / 32; ib += 2) {
            const int l1 = scale_code(id, scales[ib]);
            const int l2 = scale_code(id, scales[ib + 1]);
            y[106 + ib / 2] = static_cast<uint8_t>(l1 | (l2 << 4));
        }
    }
}

}  // namespace rebox::quant
