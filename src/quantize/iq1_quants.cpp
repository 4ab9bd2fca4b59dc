// IQ1_S (1.56 bpw) and IQ1_M (1.75 bpw): ggml's quantize_row_iq1_s_impl / _m_impl. Codes are
// -1, 0, +1 shifted by +-IQ1S_DELTA (0.125); per sub-block (32 values for IQ1_S, 16 for IQ1_M)
// the values are sorted (libc qsort, the comparator ggml passes, on the same (value, index) pair
// layout, so ties land in ggml's order) and every split into three groups is scored exactly; the
// codes are then snapped to the 2048-point grid (iq_tables, neighbours with a weighted score
// against the shifted values). IQ1_S needs an imatrix (ggml_quantize_requires_imatrix); IQ1_M
// takes one or none (weights x^2). Where ggml asserts (no grid point found, a NaN scale), the
// row is refused with an Error instead.
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"
#include "quantize/iq_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::quant {

namespace iq1_quants {

constexpr int kQK = 256;
constexpr float kDelta = 0.125f;  // IQ1S_DELTA = IQ1M_DELTA
constexpr float kPlus[3] = {-1 + kDelta, kDelta, 1 + kDelta};
constexpr float kMinus[3] = {-1 - kDelta, -kDelta, 1 - kDelta};

[[noreturn]] void no_grid_point(const char* type) {
    throw Error(ExitClass::input, std::string("quantize_rows(") + type + ")", "",
                "a block's grid search found no grid point (NaN or Inf in the row, its imatrix "
                "or their products), where ggml aborts",
                "finite values and imatrix weights whose squares fit in a float");
}

float fmax_ggml(float a, float b) { return a > b ? a : b; }

// ggml's (value, index) pair: pairs[2j] = x[j], ((int*)(pairs + 1))[2j] = j.
struct Pair {
    float value;
    int index;
};
static_assert(sizeof(Pair) == 2 * sizeof(float));

int compare_pairs(const void* left, const void* right) {
    const float l = *static_cast<const float*>(left);
    const float r = *static_cast<const float*>(right);
    return l < r ? -1 : l > r ? 1 : 0;
}

void sort_pairs(const float* xb, int n, Pair* pairs) {
    for (int j = 0; j < n; ++j) pairs[j] = {xb[j], j};
    std::qsort(pairs, static_cast<size_t>(n), sizeof(Pair), compare_pairs);
}

// iq1_find_best_neighbour2 over the neighbour list only: the least weighted squared error of
// scale * xx[l] against xb (first on ties). ggml's fallback when no neighbour scores below
// FLT_MAX reads out of bounds; such a group is refused instead.
int best_neighbour(const IqTables& t, int key, const float* xb, const float* weight, float scale,
                   const float* xx, int8_t* L, const char* type) {
    const uint16_t* list = t.neighbours.data() + (-t.map[static_cast<size_t>(key)] - 1);
    float best_score = FLT_MAX;
    int best = -1;
    for (int j = 1; j <= list[0]; ++j) {
        const int8_t* q = t.point(list[j]);
        float d2 = 0;
        for (int i = 0; i < 8; ++i) {
            const float v = xx[(q[i] - 1) / 2];
            const float w = weight[i];
            const float diff = scale * v - xb[i];
            d2 += w * diff * diff;
        }
        if (d2 < best_score) {
            best_score = d2;
            best = list[j];
        }
    }
    if (best < 0) no_grid_point(type);
    const int8_t* q = t.point(best);
    for (int i = 0; i < 8; ++i) L[i] = static_cast<int8_t>((q[i] - 1) / 2);
    return best;
}

// The grid index of 8 codes L (0..2), through a neighbour when off the grid.
int grid_index(const IqTables& t, int8_t* L, const float* xb, const float* weight, float scale,
               const float* xx, bool& all_on_grid, const char* type) {
    int key = 0;
    for (int j = 0; j < 8; ++j) key |= L[j] << (2 * j);
    const int index = t.map[static_cast<size_t>(key)];
    if (index >= 0) return index;
    all_on_grid = false;
    return best_neighbour(t, key, xb, weight, scale, xx, L, type);
}

float sigma2_of(const float* xbl) {
    float sumx2 = 0;
    for (int i = 0; i < kQK; ++i) sumx2 += xbl[i] * xbl[i];
    return 2 * sumx2 / kQK;
}

void weights_of(const float* xb, const float* qw, float sigma2, int n, float* weight) {
    if (qw != nullptr) {
        for (int i = 0; i < n; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < n; ++i) weight[i] = xb[i] * xb[i];
    }
}

float abs_max(const float* xb, int n) {
    float max = std::fabs(xb[0]);
    for (int i = 1; i < n; ++i) max = fmax_ggml(max, std::fabs(xb[i]));
    return max;
}

}  // namespace iq1_quants

void quantize_iq1_s_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    using namespace iq1_quants;
    constexpr int kBlock = 32;
    const IqTables& t = iq_tables(IqGrid::iq1);
    float scales[kQK / kBlock], weight[kBlock], sumx[kBlock + 1], sumw[kBlock + 1];
    int8_t L[kBlock];
    int8_t shifts[kQK / kBlock];
    uint16_t index[kBlock / 8];
    Pair pairs[kBlock];
    // block_iq1_s: d, qs[32] (low 8 bits of the grid indices), qh[8] (uint16: 3 high bits per
    // index, the 3-bit scale in bits 12..14, the shift sign in bit 15).
    for (int64_t ibl = 0; ibl < n_per_row / kQK; ++ibl, y += 50) {
        std::memset(y, 0, 50);
        uint16_t qh[kQK / kBlock] = {};
        float max_scale = 0;
        const float* xbl = x + kQK * ibl;
        const float sigma2 = sigma2_of(xbl);
        for (int ib = 0; ib < kQK / kBlock; ++ib) {
            const float* xb = xbl + kBlock * ib;
            weights_of(xb, qw + kQK * ibl + kBlock * ib, sigma2, kBlock, weight);
            const float max = abs_max(xb, kBlock);
            if (max < 1e-12f) {  // GROUP_MAX_EPS_IQ1_S
                scales[ib] = 0;
                shifts[ib] = 1;
                continue;
            }
            sort_pairs(xb, kBlock, pairs);
            sumx[0] = sumw[0] = 0;
            for (int j = 0; j < kBlock; ++j) {
                const int i = pairs[j].index;
                sumx[j + 1] = sumx[j] + weight[i] * xb[i];
                sumw[j + 1] = sumw[j] + weight[i];
            }
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_shift = 0;
            for (int i1 = 0; i1 <= kBlock; ++i1) {
                for (int i2 = i1; i2 <= kBlock; ++i2) {
                    for (const int shift : {1, -1}) {
                        const float* xs = shift == 1 ? kPlus : kMinus;
                        const float sumqx = (sumx[i1] - sumx[0]) * xs[0] +
                                            (sumx[i2] - sumx[i1]) * xs[1] +
                                            (sumx[kBlock] - sumx[i2]) * xs[2];
                        const float sumq2 = (sumw[i1] - sumw[0]) * xs[0] * xs[0] +
                                            (sumw[i2] - sumw[i1]) * xs[1] * xs[1] +
                                            (sumw[kBlock] - sumw[i2]) * xs[2] * xs[2];
                        if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                            scale = sumqx / sumq2;
                            best_score = scale * sumqx;
                            besti1 = i1;
                            besti2 = i2;
                            best_shift = shift;
                        }
                    }
                }
            }
            if (besti1 < 0 || besti2 < 0 || best_shift == 0) {
                scales[ib] = 0;
                shifts[ib] = 1;
                continue;
            }
            for (int j = 0; j < besti1; ++j) L[pairs[j].index] = 0;
            for (int j = besti1; j < besti2; ++j) L[pairs[j].index] = 1;
            for (int j = besti2; j < kBlock; ++j) L[pairs[j].index] = 2;
            if (scale < 0) {
                for (auto& l : L) l = static_cast<int8_t>(2 - l);
                scale = -scale;
                best_shift = -best_shift;
            }
            bool all_on_grid = true;
            const float* xx = best_shift == 1 ? kPlus : kMinus;
            for (int k = 0; k < kBlock / 8; ++k)
                index[k] = static_cast<uint16_t>(grid_index(
                    t, L + 8 * k, xb + 8 * k, weight + 8 * k, scale, xx, all_on_grid, "IQ1_S"));
            if (!all_on_grid) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < kBlock / 8; ++k) {
                    const int8_t* q = t.point(index[k]);
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float v = xx[(q[j] - 1) / 2];
                        sumqx += w * v * xb[8 * k + j];
                        sumq2 += w * v * v;
                    }
                }
                if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
            }
            uint16_t h = 0;
            for (int k = 0; k < kBlock / 8; ++k) {
                y[2 + (kBlock / 8) * ib + k] = static_cast<uint8_t>(index[k] & 255);
                h = static_cast<uint16_t>(h | ((index[k] >> 8) << (3 * k)));
            }
            qh[ib] = h;
            if (!(scale >= 0)) no_grid_point("IQ1_S");
            scales[ib] = scale;
            shifts[ib] = static_cast<int8_t>(best_shift);
            max_scale = fmax_ggml(max_scale, scale);
        }
        if (!max_scale) {
            for (int ib = 0; ib < kQK / kBlock; ++ib) {
                y[34 + 2 * ib] = static_cast<uint8_t>(qh[ib] & 0xff);
                y[35 + 2 * ib] = static_cast<uint8_t>(qh[ib] >> 8);
            }
            continue;
        }
        const float d = max_scale / 15;
        store_fp16(y, d * 1.125f);
        const float id = 1 / d;
        for (int ib = 0; ib < kQK / kBlock; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = l < 0 ? 0 : (l > 7 ? 7 : l);
            if (shifts[ib] == -1) l |= 8;
            qh[ib] = static_cast<uint16_t>(qh[ib] | (l << 12));
            y[34 + 2 * ib] = static_cast<uint8_t>(qh[ib] & 0xff);
            y[35 + 2 * ib] = static_cast<uint8_t>(qh[ib] >> 8);
        }
    }
}

void quantize_iq1_m_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    using namespace iq1_quants;
    constexpr int kBlock = 16;
    constexpr uint8_t kMasks[4] = {0x00, 0x80, 0x08, 0x88};
    const IqTables& t = iq_tables(IqGrid::iq1);
    float scales[kQK / kBlock], weight[kBlock];
    int8_t L[kBlock];
    int8_t shifts[kQK / kBlock];
    uint16_t index[kBlock / 8];
    Pair pairs[kBlock];
    // The group's shifted values: group 0 by best_k < 2, group 1 by best_k even.
    const auto values_for = [](int best_k, int k) -> const float* {
        if (k == 0) return best_k < 2 ? kPlus : kMinus;
        return best_k % 2 == 0 ? kPlus : kMinus;
    };
    // block_iq1_m: qs[32], qh[16] (3 high bits of two indices and their shift signs), scales[8]
    // (four uint16: 3-bit sub-block scales, the fp16 super-block scale in their top nibbles).
    for (int64_t ibl = 0; ibl < n_per_row / kQK; ++ibl, y += 56) {
        std::memset(y, 0, 56);
        uint8_t* qs = y;
        uint8_t* qh = y + 32;
        uint16_t sc[4] = {};
        float max_scale = 0;
        const float* xbl = x + kQK * ibl;
        const float sigma2 = sigma2_of(xbl);
        for (int ib = 0; ib < kQK / kBlock; ++ib) {
            const float* xb = xbl + kBlock * ib;
            weights_of(xb, qw ? qw + kQK * ibl + kBlock * ib : nullptr, sigma2, kBlock, weight);
            const float max = abs_max(xb, kBlock);
            if (max < 1e-7f) {  // GROUP_MAX_EPS_IQ1_M
                scales[ib] = 0;
                shifts[ib] = 0;
                continue;
            }
            sort_pairs(xb, kBlock, pairs);
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_k = -1;
            for (int i1 = 0; i1 <= kBlock; ++i1) {
                for (int i2 = i1; i2 <= kBlock; ++i2) {
                    float sumqx[4] = {}, sumq2[4] = {};
                    for (int j = 0; j < kBlock; ++j) {
                        const int g = j < i1 ? 0 : j < i2 ? 1 : 2;
                        const int i = pairs[j].index;
                        const float w = weight[i];
                        const float p = kPlus[g], m = kMinus[g];
                        // Sums 0..3 take (+,+), (+,-), (-,+), (-,-) shifts for the (first,
                        // second) half of the 16 values.
                        const bool first = i < kBlock / 2;
                        const float v[4] = {p, first ? p : m, first ? m : p, m};
                        for (int k = 0; k < 4; ++k) {
                            sumqx[k] += w * v[k] * xb[i];
                            sumq2[k] += w * v[k] * v[k];
                        }
                    }
                    for (int k = 0; k < 4; ++k) {
                        if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best_score * sumq2[k]) {
                            scale = sumqx[k] / sumq2[k];
                            best_score = scale * sumqx[k];
                            besti1 = i1;
                            besti2 = i2;
                            best_k = k;
                        }
                    }
                }
            }
            if (besti1 < 0 || besti2 < 0 || best_k < 0) {
                scales[ib] = 0;
                shifts[ib] = 0;
                continue;
            }
            for (int j = 0; j < besti1; ++j) L[pairs[j].index] = 0;
            for (int j = besti1; j < besti2; ++j) L[pairs[j].index] = 1;
            for (int j = besti2; j < kBlock; ++j) L[pairs[j].index] = 2;
            if (scale < 0) {
                for (auto& l : L) l = static_cast<int8_t>(2 - l);
                scale = -scale;
                best_k = 3 - best_k;
            }
            bool all_on_grid = true;
            for (int k = 0; k < kBlock / 8; ++k)
                index[k] = static_cast<uint16_t>(
                    grid_index(t, L + 8 * k, xb + 8 * k, weight + 8 * k, scale,
                               values_for(best_k, k), all_on_grid, "IQ1_M"));
            if (!all_on_grid) {
                float sumqx_f = 0, sumq2_f = 0;
                for (int k = 0; k < kBlock / 8; ++k) {
                    const float* xx = values_for(best_k, k);
                    const int8_t* q = t.point(index[k]);
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float v = xx[(q[j] - 1) / 2];
                        sumqx_f += w * v * xb[8 * k + j];
                        sumq2_f += w * v * v;
                    }
                }
                if (sumqx_f > 0 && sumq2_f > 0) scale = sumqx_f / sumq2_f;
            }
            qs[2 * ib + 0] = static_cast<uint8_t>(index[0] & 255);
            qs[2 * ib + 1] = static_cast<uint8_t>(index[1] & 255);
            qh[ib] = static_cast<uint8_t>((index[0] >> 8) | ((index[1] >> 8) << 4));
            if (!(scale >= 0)) no_grid_point("IQ1_M");
            scales[ib] = scale;
            shifts[ib] = static_cast<int8_t>(best_k);
            max_scale = fmax_ggml(max_scale, scale);
        }
        if (!max_scale) continue;
        float d = max_scale / 15;
        const float id = 1 / d;
        float sumqx_f = 0, sumq2_f = 0;
        for (int ib = 0; ib < kQK / kBlock; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = l < 0 ? 0 : (l > 7 ? 7 : l);
            sc[ib / 4] = static_cast<uint16_t>(sc[ib / 4] | (l << (3 * (ib % 4))));
            qh[ib] = static_cast<uint8_t>(qh[ib] | kMasks[shifts[ib]]);
            const float* xb = xbl + kBlock * ib;
            weights_of(xb, qw ? qw + kQK * ibl + kBlock * ib : nullptr, sigma2, kBlock, weight);
            for (int k = 0; k < kBlock / 8; ++k) {
                const float* xx = values_for(shifts[ib], k);
                const int point = qs[2 * ib + k] | ((qh[ib] << (8 - 4 * k)) & 0x700);
                const int8_t* q = t.point(point);
                for (int j = 0; j < 8; ++j) {
                    const float w = weight[8 * k + j];
                    const float v = xx[(q[j] - 1) / 2] * static_cast<float>(2 * l + 1);
                    sumqx_f += w * v * xb[8 * k + j];
                    sumq2_f += w * v * v;
                }
            }
        }
        if (sumq2_f > 0) d = sumqx_f / sumq2_f;
        const uint16_t s = fp32_to_fp16(d * 1.1125f);
        sc[0] = static_cast<uint16_t>(sc[0] | ((s & 0x000f) << 12));
        sc[1] = static_cast<uint16_t>(sc[1] | ((s & 0x00f0) << 8));
        sc[2] = static_cast<uint16_t>(sc[2] | ((s & 0x0f00) << 4));
        sc[3] = static_cast<uint16_t>(sc[3] | (s & 0xf000));
        for (int i = 0; i < 4; ++i) {
            y[48 + 2 * i] = static_cast<uint8_t>(sc[i] & 0xff);
            y[49 + 2 * i] = static_cast<uint8_t>(sc[i] >> 8);
        }
    }
}

}  // namespace rebox::quant
