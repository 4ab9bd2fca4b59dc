// verify's re-quantizer for the lattice i-quants, 256-value super-blocks: IQ2_XXS, IQ2_XS, IQ2_S
// (groups of 8 values on a 2-bit grid of 256 / 512 / 1024 points), IQ3_XXS, IQ3_S (groups of 4
// on a 3-bit grid of 256 / 512 points), IQ1_S, IQ1_M (groups of 8 on the 2048-point grid of
// -1/0/+1 codes shifted by +-0.125). Rewritten from ggml-quants.c (quantize_row_iq2_xxs_impl,
// _iq2_xs_impl, _iq2_s_impl, quantize_row_iq3_xxs_impl, _iq3_s_impl, quantize_row_iq1_s_impl,
// _iq1_m_impl, their neighbour searches and make_qp_quants) with verify's own code; the grid
// points come from the shared read-only data (ref_iq_grids.hpp says which). Every per-block input
// is the block's own values and importance: sigma2 is the super-block's mean square (x2 except
// for IQ2_XXS / IQ2_XS), so a row carries no statistic for these types.
//
// How a sub-block is searched (IQ2, IQ3): values become magnitudes xval = |x| with a sign bit each
// (IQ2_XXS, IQ2_XS and IQ3_XXS store 7 sign bits per 8 values: where a group has an odd number of
// negatives, the value with the least weight*x^2 takes the other sign); trial inverse scales
// (2*kMaxQ - 1 + step * t) / max give codes l = round((id*xval - 1) / 2) clamped to
// [0, kMaxQ - 1]; a group whose code key is not a grid point takes its neighbour with the least
// sum sqrt(weight) * (scale*(2l+1) - xval)^2; each trial's fit sum w*x*q / sum w*q^2 is kept when
// it scores better; the groups off the grid are snapped again at the best scale. The super-block
// scale is max_scale / 31 (IQ1: / 15), a 4-bit (IQ1: 3-bit) code per sub-block. IQ1 instead
// scores every split of the sorted values into three levels exactly, then snaps to the grid.
// Arithmetic is binary32 in ggml's order (no FMA, sums in index order).
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "verify/quantized/ref_half_round.hpp"
#include "verify/quantized/ref_iq_grids.hpp"
#include "verify/quantized/ref_quant_search.hpp"
#include "verify/quantized/ref_quantize_blocks.hpp"

namespace rebox::verify_ref::quant_blocks {

namespace iq_search {

using iq_grids::Grid;
using iq_grids::RefIqGrid;
using quant_search::nearest_int;

constexpr int kSuperBlock = 256;

float larger(float a, float b) { return a > b ? a : b; }  // ggml's MAX(a, b)

int clamp_code(int value, int high) { return value < 0 ? 0 : value > high ? high : value; }

void store_u32le(uint8_t* out, uint32_t value) {
    for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

float sum_of_squares(const float* x) {
    float sum = 0;
    for (int i = 0; i < kSuperBlock; ++i) sum += x[i] * x[i];
    return sum;
}

// The weights of n values: importance * sqrt(sigma2 + x^2), or the plain weight without it.
enum class Plain { x_squared, quarter_sigma2_plus_x_squared };
void value_weights(const float* x, const float* importance, float sigma2, int n, Plain plain,
                   float* weight) {
    for (int i = 0; i < n; ++i) {
        if (importance)
            weight[i] = importance[i] * std::sqrt(sigma2 + x[i] * x[i]);
        else if (plain == Plain::x_squared)
            weight[i] = x[i] * x[i];
        else
            weight[i] = 0.25f * sigma2 + x[i] * x[i];
    }
}

// Eight values as magnitudes and sign bits (bit i: value i negative).
uint8_t magnitudes(const float* x, float* xval) {
    uint8_t signs = 0;
    for (int i = 0; i < 8; ++i) {
        if (x[i] >= 0) {
            xval[i] = x[i];
        } else {
            xval[i] = -x[i];
            signs = static_cast<uint8_t>(signs | (1u << i));
        }
    }
    return signs;
}

// The same with an even number of sign bits: on an odd count, the value of least weight*x^2 (the
// first of equals) has its sign bit toggled and its magnitude negated. Returns the low 7 bits
// (the eighth follows from the parity).
uint8_t even_magnitudes(const float* x, const float* weight, float* xval) {
    uint8_t signs = magnitudes(x, xval);
    int negatives = 0;
    for (int i = 0; i < 8; ++i) negatives += (signs >> i) & 1;
    if (negatives % 2) {
        int least = 0;
        float least_value = weight[0] * x[0] * x[0];
        for (int i = 1; i < 8; ++i) {
            const float value = weight[i] * x[i] * x[i];
            if (value < least_value) {
                least_value = value;
                least = i;
            }
        }
        xval[least] = -xval[least];
        signs = static_cast<uint8_t>(signs ^ (1u << least));
    }
    return static_cast<uint8_t>(signs & 127);
}

uint32_t key_of(const RefIqGrid& g, const int8_t* codes) {
    uint32_t key = 0;
    for (int i = 0; i < g.values; ++i)
        key |= static_cast<uint32_t>(static_cast<uint8_t>(codes[i])) << (g.bits * i);
    return key;
}

// The grid index of the group's codes; 0 when they are off the grid (only where ggml aborts on
// a NaN, so no file holds such a block).
int index_or_zero(const RefIqGrid& g, const int8_t* codes) {
    const int index = g.index(key_of(g, codes));
    return index < 0 ? 0 : index;
}

// The neighbour of an off-grid key with the least sum root_weight*(scale*q - xval)^2 (the first
// of equals); its codes (q - 1) / 2 go to `codes`. -1 (codes kept) when none scores (NaN).
int nearest_neighbour(const RefIqGrid& g, uint32_t key, const float* xval, const float* root_weight,
                      float scale, int8_t* codes) {
    float best = FLT_MAX;
    int best_index = -1;
    for (const uint16_t candidate : g.neighbours_of(key)) {
        const int8_t* q = g.point(candidate);
        float d2 = 0;
        for (int i = 0; i < g.values; ++i) {
            const float diff = scale * static_cast<float>(q[i]) - xval[i];
            d2 += root_weight[i] * diff * diff;
        }
        if (d2 < best) {
            best = d2;
            best_index = candidate;
        }
    }
    if (best_index >= 0) {
        const int8_t* q = g.point(best_index);
        for (int i = 0; i < g.values; ++i) codes[i] = static_cast<int8_t>((q[i] - 1) / 2);
    }
    return best_index;
}

// One group's codes at inverse scale `id`, snapped to the grid at `scale`; true when the codes
// were a grid point already.
bool snap_group(const RefIqGrid& g, int kmax, const float* xval, const float* root_weight, float id,
                float scale, int8_t* codes) {
    for (int i = 0; i < g.values; ++i)
        codes[i] =
            static_cast<int8_t>(clamp_code(nearest_int(0.5f * (id * xval[i] - 1)), kmax - 1));
    const uint32_t key = key_of(g, codes);
    if (g.index(key) >= 0) return true;
    nearest_neighbour(g, key, xval, root_weight, scale, codes);
    return false;
}

// sum w*x*q and sum w*q^2 with q = 2l + 1.
void fit_sums(int n, const float* weight, const float* xval, const int8_t* codes, float* sum_qx,
              float* sum_q2) {
    float qx = 0, q2 = 0;
    for (int i = 0; i < n; ++i) {
        const float q = static_cast<float>(2 * codes[i] + 1);
        qx += weight[i] * xval[i] * q;
        q2 += weight[i] * q * q;
    }
    *sum_qx = qx;
    *sum_q2 = q2;
}

// The trial search of IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S over one sub-block of n values (max > 0,
// the largest magnitude): 2*trials + 1 inverse scales (2*kmax - 1 + step*t) / max; then the
// groups off the grid at the best scale are snapped again (IQ3_S: every group, and its groups
// start as off the grid, so a sub-block where no trial scored is snapped at max / 15).
struct TrialSearch {
    const RefIqGrid& grid;
    int n;
    int kmax;
    int trials;
    float step;
    bool iq3_s;
};

float trial_scale(const TrialSearch& s, const float* xval, const float* weight,
                  const float* root_weight, float max, int8_t* codes) {
    const int groups = s.n / s.grid.values;
    int8_t trial_codes[32];
    bool on_grid[8], trial_on_grid[8];
    for (int k = 0; k < groups; ++k) on_grid[k] = !s.iq3_s;
    float best = 0;
    float scale = max / static_cast<float>(2 * s.kmax - 1);
    for (int t = -s.trials; t <= s.trials; ++t) {
        const float id =
            (static_cast<float>(2 * s.kmax - 1) + static_cast<float>(t) * s.step) / max;
        const float this_scale = 1 / id;
        for (int k = 0; k < groups; ++k) {
            const int at = k * s.grid.values;
            trial_on_grid[k] = snap_group(s.grid, s.kmax, xval + at, root_weight + at, id,
                                          this_scale, trial_codes + at);
        }
        float sum_qx = 0, sum_q2 = 0;
        fit_sums(s.n, weight, xval, trial_codes, &sum_qx, &sum_q2);
        if (sum_q2 > 0 && sum_qx * sum_qx > best * sum_q2) {
            scale = sum_qx / sum_q2;
            best = scale * sum_qx;
            std::memcpy(codes, trial_codes, static_cast<size_t>(s.n));
            for (int k = 0; k < groups; ++k) on_grid[k] = trial_on_grid[k];
        }
    }
    int off_grid = 0;
    for (int k = 0; k < groups; ++k) off_grid += on_grid[k] ? 0 : 1;
    if (off_grid > 0 && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < groups; ++k) {
            if (on_grid[k] && !s.iq3_s) continue;
            const int at = k * s.grid.values;
            snap_group(s.grid, s.kmax, xval + at, root_weight + at, id, scale, codes + at);
        }
        float sum_qx = 0, sum_q2 = 0;
        fit_sums(s.n, weight, xval, codes, &sum_qx, &sum_q2);
        if (sum_q2 > 0) scale = sum_qx / sum_q2;
    }
    return scale;
}

// The 4-bit sub-block scale code of IQ2 / IQ3: round((scale / d - 1) / 2) in [0, 15].
int scale_code(float id, float scale) {
    return clamp_code(nearest_int(0.5f * (id * scale - 1)), 15);
}

void square_roots(int n, const float* weight, float* root_weight) {
    for (int i = 0; i < n; ++i) root_weight[i] = std::sqrt(weight[i]);
}

// ---- IQ1_S / IQ1_M

constexpr float kDelta = 0.125f;
constexpr float kShiftedUp[3] = {-1 + kDelta, kDelta, 1 + kDelta};     // ggml's x_p
constexpr float kShiftedDown[3] = {-1 - kDelta, -kDelta, 1 - kDelta};  // x_m

// ggml's (value, index) record: qsort sees the value, the index rides along.
struct Ranked {
    float value;
    int index;
};

int by_value(const void* left, const void* right) {
    const float l = static_cast<const Ranked*>(left)->value;
    const float r = static_cast<const Ranked*>(right)->value;
    return l < r ? -1 : l > r ? 1 : 0;
}

// The values in ascending order, sorted by libc's qsort on ggml's 8-byte records with ggml's
// comparator: values that compare equal land where they land in ggml on this libc.
void rank_values(const float* x, int n, Ranked* ranked) {
    for (int j = 0; j < n; ++j) ranked[j] = {x[j], j};
    std::qsort(ranked, static_cast<size_t>(n), sizeof(Ranked), by_value);
}

// iq1_find_best_neighbour2: the neighbour with the least sum weight*(scale*xx[l] - x)^2 (the first
// of equals); 0 when none scores (NaN, where ggml aborts).
int iq1_neighbour(const RefIqGrid& g, uint32_t key, const float* x, const float* weight,
                  float scale, const float* levels) {
    float best = FLT_MAX;
    int best_index = -1;
    for (const uint16_t candidate : g.neighbours_of(key)) {
        const int8_t* p = g.point(candidate);
        float d2 = 0;
        for (int i = 0; i < 8; ++i) {
            const float q = levels[(p[i] - 1) / 2];
            const float diff = scale * q - x[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best) {
            best = d2;
            best_index = candidate;
        }
    }
    return best_index < 0 ? 0 : best_index;
}

// The grid index of 8 level codes (0, 1, 2), or its neighbour; *on_grid false for a neighbour.
int iq1_group_index(const RefIqGrid& g, const int8_t* codes, const float* x, const float* weight,
                    float scale, const float* levels, bool* on_grid) {
    const uint32_t key = key_of(g, codes);
    const int index = g.index(key);
    if (index >= 0) return index;
    *on_grid = false;
    return iq1_neighbour(g, key, x, weight, scale, levels);
}

// sum w*q*x, sum w*q^2 over one group at grid point `index` with level values `levels`, scaled
// by `multiplier` (1 in the sub-block refit, the sub-block's 2l+1 in IQ1_M's final fit).
void iq1_group_sums(const RefIqGrid& g, int index, const float* levels, float multiplier,
                    bool scaled, const float* x, const float* weight, float* sum_qx,
                    float* sum_q2) {
    const int8_t* p = g.point(index);
    for (int j = 0; j < 8; ++j) {
        const float q = scaled ? levels[(p[j] - 1) / 2] * multiplier : levels[(p[j] - 1) / 2];
        *sum_qx += weight[j] * q * x[j];
        *sum_q2 += weight[j] * q * q;
    }
}

// The codes of a split: ranks [0, first) level 0, [first, second) level 1, the rest level 2.
void split_codes(const Ranked* ranked, int n, int first, int second, int8_t* codes) {
    for (int j = 0; j < n; ++j)
        codes[ranked[j].index] = static_cast<int8_t>(j < first ? 0 : j < second ? 1 : 2);
}

void iq2_xxs(const float* x, const float* importance, uint8_t* out) {
    const RefIqGrid& g = iq_grids::grid(Grid::iq2_xxs);
    constexpr int kMaxQ = 3;
    std::memset(out, 0, 66);
    uint32_t words[16] = {};  // per sub-block: 4 grid indices, then signs and scale code
    float scales[8];
    float max_scale = 0;
    const float sigma2 = sum_of_squares(x) / kSuperBlock;
    for (int ib = 0; ib < 8; ++ib) {
        const float* xb = x + 32 * ib;
        float weight[32], root_weight[32], xval[32];
        int8_t codes[32];
        uint8_t signs[4];
        // ggml asserts an importance: a plain row (verify refuses it first) weighs x^2 here.
        value_weights(xb, importance ? importance + 32 * ib : nullptr, sigma2, 32, Plain::x_squared,
                      weight);
        square_roots(32, weight, root_weight);
        for (int k = 0; k < 4; ++k)
            signs[k] = even_magnitudes(xb + 8 * k, weight + 8 * k, xval + 8 * k);
        float max = xval[0];
        for (int i = 1; i < 32; ++i) max = larger(max, xval[i]);
        if (max < 1e-15f) {
            scales[ib] = 0;
            continue;
        }
        uint8_t qp_codes[32];
        float scale = quant_search::positive_scale(32, kMaxQ + 1, xval, qp_codes, weight);
        for (int i = 0; i < 32; ++i) codes[i] = static_cast<int8_t>(qp_codes[i]);
        const float effective_max = scale * static_cast<float>(kMaxQ);
        if (effective_max <= 0) {
            scales[ib] = 0;
            continue;
        }
        float best = 0;
        int8_t trial_codes[32];
        for (int t = -6; t <= 6; ++t) {
            const float id =
                (static_cast<float>(2 * kMaxQ - 1) + static_cast<float>(t) * 0.1f) / effective_max;
            const float this_scale = 1 / id;
            for (int k = 0; k < 4; ++k)
                snap_group(g, kMaxQ, xval + 8 * k, root_weight + 8 * k, id, this_scale,
                           trial_codes + 8 * k);
            float sum_qx = 0, sum_q2 = 0;
            fit_sums(32, weight, xval, trial_codes, &sum_qx, &sum_q2);
            if (sum_q2 > 0 && sum_qx * sum_qx > best * sum_q2) {
                scale = sum_qx / sum_q2;
                best = scale * sum_qx;
                std::memcpy(codes, trial_codes, 32);
            }
        }
        if (scale > 0) {
            const float id = 1 / scale;
            for (int k = 0; k < 4; ++k)
                snap_group(g, kMaxQ, xval + 8 * k, root_weight + 8 * k, id, scale, codes + 8 * k);
            float sum_qx = 0, sum_q2 = 0;
            fit_sums(32, weight, xval, codes, &sum_qx, &sum_q2);
            if (sum_q2 > 0) scale = sum_qx / sum_q2;
        }
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 4; ++k) signs[k] = static_cast<uint8_t>(~signs[k] & 127);
        }
        for (int k = 0; k < 4; ++k) {
            words[2 * ib] |= static_cast<uint32_t>(index_or_zero(g, codes + 8 * k)) << (8 * k);
            words[2 * ib + 1] |= static_cast<uint32_t>(signs[k]) << (7 * k);
        }
        scales[ib] = scale;
        max_scale = larger(max_scale, scale);
    }
    if (!max_scale) return;
    const float d = max_scale / 31;
    store_u16le(out, float_to_half_bits(d));
    const float id = 1 / d;
    for (int ib = 0; ib < 8; ++ib)
        words[2 * ib + 1] |= static_cast<uint32_t>(scale_code(id, scales[ib])) << 28;
    for (int w = 0; w < 16; ++w) store_u32le(out + 2 + 4 * w, words[w]);
}

void iq2_xs(const float* x, const float* importance, uint8_t* out) {
    const RefIqGrid& g = iq_grids::grid(Grid::iq2_xs);
    const TrialSearch search{g, 16, 3, 9, 0.1f, false};
    std::memset(out, 0, 74);
    uint16_t words[32] = {};  // grid index | 7 sign bits << 9, per group of 8
    float scales[16];
    float max_scale = 0;
    const float sigma2 = sum_of_squares(x) / kSuperBlock;
    for (int ib = 0; ib < 16; ++ib) {
        const float* xb = x + 16 * ib;
        float weight[16], root_weight[16], xval[16];
        int8_t codes[16] = {};
        uint8_t signs[2];
        value_weights(xb, importance ? importance + 16 * ib : nullptr, sigma2, 16, Plain::x_squared,
                      weight);
        square_roots(16, weight, root_weight);
        for (int k = 0; k < 2; ++k)
            signs[k] = even_magnitudes(xb + 8 * k, weight + 8 * k, xval + 8 * k);
        float max = xval[0];
        for (int i = 1; i < 16; ++i) max = larger(max, xval[i]);
        if (max < 1e-15f) {
            scales[ib] = 0;
            continue;
        }
        float scale = trial_scale(search, xval, weight, root_weight, max, codes);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 2; ++k) signs[k] = static_cast<uint8_t>(~signs[k] & 127);
        }
        for (int k = 0; k < 2; ++k)
            words[2 * ib + k] =
                static_cast<uint16_t>(index_or_zero(g, codes + 8 * k) | (signs[k] << 9));
        scales[ib] = scale;
        max_scale = larger(max_scale, scale);
    }
    if (!max_scale) return;
    const float d = max_scale / 31;
    store_u16le(out, float_to_half_bits(d));
    const float id = 1 / d;
    for (int w = 0; w < 32; ++w) store_u16le(out + 2 + 2 * w, words[w]);
    for (int ib = 0; ib < 16; ++ib)
        out[66 + ib / 2] =
            static_cast<uint8_t>(out[66 + ib / 2] | (scale_code(id, scales[ib]) << (4 * (ib % 2))));
}

void iq2_s(const float* x, const float* importance, uint8_t* out) {
    const RefIqGrid& g = iq_grids::grid(Grid::iq2_s);
    const TrialSearch search{g, 16, 3, 9, 0.1f, false};
    std::memset(out, 0, 82);
    uint8_t* qs = out + 2;   // 32 low bytes of grid indices, then 32 sign bytes
    uint8_t* qh = out + 66;  // 2 high bits per group
    uint8_t* scale_codes = out + 74;
    float scales[16];
    float max_scale = 0;
    const float sigma2 = 2 * sum_of_squares(x) / kSuperBlock;
    for (int ib = 0; ib < 16; ++ib) {
        const float* xb = x + 16 * ib;
        float weight[16], root_weight[16], xval[16];
        int8_t codes[16] = {};
        uint8_t signs[2];
        value_weights(xb, importance ? importance + 16 * ib : nullptr, sigma2, 16,
                      Plain::quarter_sigma2_plus_x_squared, weight);
        square_roots(16, weight, root_weight);
        for (int k = 0; k < 2; ++k) signs[k] = magnitudes(xb + 8 * k, xval + 8 * k);
        float max = xval[0];
        for (int i = 1; i < 16; ++i) max = larger(max, xval[i]);
        if (max < 1e-8f) {
            scales[ib] = 0;
            continue;
        }
        float scale = trial_scale(search, xval, weight, root_weight, max, codes);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 2; ++k) signs[k] = static_cast<uint8_t>(~signs[k]);
        }
        for (int k = 0; k < 2; ++k) {
            const int group = 2 * ib + k;
            const int index = index_or_zero(g, codes + 8 * k);
            qs[group] = static_cast<uint8_t>(index & 255);
            qh[group / 4] =
                static_cast<uint8_t>(qh[group / 4] | ((index >> 8) << (2 * (group % 4))));
            qs[32 + group] = signs[k];
        }
        scales[ib] = scale;
        max_scale = larger(max_scale, scale);
    }
    if (!max_scale) return;
    const float d = max_scale / 31;
    store_u16le(out, float_to_half_bits(d * 0.9875f));
    const float id = 1 / d;
    for (int ib = 0; ib < 16; ++ib)
        scale_codes[ib / 2] = static_cast<uint8_t>(scale_codes[ib / 2] |
                                                   (scale_code(id, scales[ib]) << (4 * (ib % 2))));
}

void iq3_xxs(const float* x, const float* importance, uint8_t* out) {
    const RefIqGrid& g = iq_grids::grid(Grid::iq3_xxs);
    const TrialSearch search{g, 32, 8, 15, 0.2f, false};
    std::memset(out, 0, 98);
    uint8_t indices[64] = {};
    uint32_t signs_and_scale[8] = {};
    float scales[8];
    float max_scale = 0;
    const float sigma2 = 2 * sum_of_squares(x) / kSuperBlock;
    for (int ib = 0; ib < 8; ++ib) {
        const float* xb = x + 32 * ib;
        float weight[32], root_weight[32], xval[32];
        int8_t codes[32] = {};
        uint8_t signs[4];
        value_weights(xb, importance ? importance + 32 * ib : nullptr, sigma2, 32, Plain::x_squared,
                      weight);
        square_roots(32, weight, root_weight);
        for (int k = 0; k < 4; ++k)
            signs[k] = even_magnitudes(xb + 8 * k, weight + 8 * k, xval + 8 * k);
        float max = xval[0];
        for (int i = 1; i < 32; ++i) max = larger(max, xval[i]);
        if (max < 1e-8f) {
            scales[ib] = 0;
            continue;
        }
        float scale = trial_scale(search, xval, weight, root_weight, max, codes);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 4; ++k) signs[k] = static_cast<uint8_t>(~signs[k] & 127);
        }
        for (int k = 0; k < 8; ++k)
            indices[8 * ib + k] = static_cast<uint8_t>(index_or_zero(g, codes + 4 * k));
        signs_and_scale[ib] =
            static_cast<uint32_t>(signs[0]) | (static_cast<uint32_t>(signs[1]) << 7) |
            (static_cast<uint32_t>(signs[2]) << 14) | (static_cast<uint32_t>(signs[3]) << 21);
        scales[ib] = scale;
        max_scale = larger(max_scale, scale);
    }
    if (!max_scale) return;
    const float d = max_scale / 31;
    store_u16le(out, float_to_half_bits(d * 1.0125f));
    const float id = 1 / d;
    std::memcpy(out + 2, indices, 64);
    for (int ib = 0; ib < 8; ++ib)
        store_u32le(
            out + 66 + 4 * ib,
            signs_and_scale[ib] | (static_cast<uint32_t>(scale_code(id, scales[ib])) << 28));
}

void iq3_s(const float* x, const float* importance, uint8_t* out) {
    const RefIqGrid& g = iq_grids::grid(Grid::iq3_s);
    const TrialSearch search{g, 32, 8, 9, 0.2f, true};
    std::memset(out, 0, 110);
    uint8_t* qh = out + 66;
    uint8_t* scale_codes = out + 106;
    // ggml advances its qs / signs pointers only past the sub-blocks it quantizes (an all-zero
    // sub-block is skipped without advancing), while qh is indexed by the sub-block: the next
    // sub-block's bytes land where the skipped one's would have.
    int qs_at = 2, signs_at = 74;
    float scales[8];
    float max_scale = 0;
    const float sigma2 = 2 * sum_of_squares(x) / kSuperBlock;
    for (int ib = 0; ib < 8; ++ib) {
        const float* xb = x + 32 * ib;
        float weight[32], root_weight[32], xval[32];
        int8_t codes[32] = {};
        uint8_t signs[4];
        value_weights(xb, importance ? importance + 32 * ib : nullptr, sigma2, 32, Plain::x_squared,
                      weight);
        square_roots(32, weight, root_weight);
        for (int k = 0; k < 4; ++k) signs[k] = magnitudes(xb + 8 * k, xval + 8 * k);
        float max = xval[0];
        for (int i = 1; i < 32; ++i) max = larger(max, xval[i]);
        if (!max) {
            scales[ib] = 0;
            continue;
        }
        float scale = trial_scale(search, xval, weight, root_weight, max, codes);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 4; ++k) signs[k] = static_cast<uint8_t>(~signs[k]);
        }
        for (int k = 0; k < 8; ++k) {
            const int index = index_or_zero(g, codes + 4 * k);
            out[qs_at + k] = static_cast<uint8_t>(index & 255);
            qh[ib] = static_cast<uint8_t>(qh[ib] | ((index >> 8) << k));
        }
        qs_at += 8;
        for (int k = 0; k < 4; ++k) out[signs_at + k] = signs[k];
        signs_at += 4;
        scales[ib] = scale;
        max_scale = larger(max_scale, scale);
    }
    if (!max_scale) return;
    const float d = max_scale / 31;
    store_u16le(out, float_to_half_bits(d * 1.033f));
    const float id = 1 / d;
    for (int ib = 0; ib < 8; ib += 2)
        scale_codes[ib / 2] = static_cast<uint8_t>(scale_code(id, scales[ib]) |
                                                   (scale_code(id, scales[ib + 1]) << 4));
}

void iq1_s(const float* x, const float* importance, uint8_t* out) {
    const RefIqGrid& g = iq_grids::grid(Grid::iq1);
    constexpr int kBlock = 32;
    std::memset(out, 0, 50);
    uint8_t* qs = out + 2;
    uint16_t high[8] = {};  // per sub-block: 3 high index bits per group, then scale and shift
    float scales[8];
    int shifts[8];
    float max_scale = 0;
    const float sigma2 = 2 * sum_of_squares(x) / kSuperBlock;
    for (int ib = 0; ib < 8; ++ib) {
        const float* xb = x + kBlock * ib;
        float weight[kBlock];
        // ggml asserts an importance: a plain row (verify refuses it first) weighs x^2 here.
        value_weights(xb, importance ? importance + kBlock * ib : nullptr, sigma2, kBlock,
                      Plain::x_squared, weight);
        float max = std::fabs(xb[0]);
        for (int i = 1; i < kBlock; ++i) max = larger(max, std::fabs(xb[i]));
        if (max < 1e-12f) {
            scales[ib] = 0;
            shifts[ib] = 1;
            continue;
        }
        Ranked ranked[kBlock];
        rank_values(xb, kBlock, ranked);
        float sum_x[kBlock + 1], sum_w[kBlock + 1];
        sum_x[0] = sum_w[0] = 0;
        for (int j = 0; j < kBlock; ++j) {
            const int i = ranked[j].index;
            sum_x[j + 1] = sum_x[j] + weight[i] * xb[i];
            sum_w[j + 1] = sum_w[j] + weight[i];
        }
        float best = -FLT_MAX, scale = max;
        int first = -1, second = -1, shift = 0;
        for (int i1 = 0; i1 <= kBlock; ++i1) {
            for (int i2 = i1; i2 <= kBlock; ++i2) {
                const float sx0 = sum_x[i1] - sum_x[0], sx1 = sum_x[i2] - sum_x[i1],
                            sx2 = sum_x[kBlock] - sum_x[i2];
                const float sw0 = sum_w[i1] - sum_w[0], sw1 = sum_w[i2] - sum_w[i1],
                            sw2 = sum_w[kBlock] - sum_w[i2];
                for (const int direction : {1, -1}) {
                    const float* l = direction == 1 ? kShiftedUp : kShiftedDown;
                    const float sum_qx = sx0 * l[0] + sx1 * l[1] + sx2 * l[2];
                    const float sum_q2 = sw0 * l[0] * l[0] + sw1 * l[1] * l[1] + sw2 * l[2] * l[2];
                    if (sum_q2 > 0 && sum_qx * sum_qx > best * sum_q2) {
                        scale = sum_qx / sum_q2;
                        best = scale * sum_qx;
                        first = i1;
                        second = i2;
                        shift = direction;
                    }
                }
            }
        }
        if (first < 0 || second < 0 || shift == 0) {
            scales[ib] = 0;
            shifts[ib] = 1;
            continue;
        }
        int8_t codes[kBlock];
        split_codes(ranked, kBlock, first, second, codes);
        if (scale < 0) {
            for (int j = 0; j < kBlock; ++j) codes[j] = static_cast<int8_t>(2 - codes[j]);
            scale = -scale;
            shift = -shift;
        }
        const float* levels = shift == 1 ? kShiftedUp : kShiftedDown;
        bool on_grid = true;
        int index[4];
        for (int k = 0; k < 4; ++k)
            index[k] = iq1_group_index(g, codes + 8 * k, xb + 8 * k, weight + 8 * k, scale, levels,
                                       &on_grid);
        if (!on_grid) {
            float sum_qx = 0, sum_q2 = 0;
            for (int k = 0; k < 4; ++k)
                iq1_group_sums(g, index[k], levels, 1, false, xb + 8 * k, weight + 8 * k, &sum_qx,
                               &sum_q2);
            if (sum_qx > 0 && sum_q2 > 0) scale = sum_qx / sum_q2;
        }
        for (int k = 0; k < 4; ++k) {
            qs[4 * ib + k] = static_cast<uint8_t>(index[k] & 255);
            high[ib] = static_cast<uint16_t>(high[ib] | ((index[k] >> 8) << (3 * k)));
        }
        scales[ib] = scale;
        shifts[ib] = shift;
        max_scale = larger(max_scale, scale);
    }
    if (max_scale) {
        const float d = max_scale / 15;
        store_u16le(out, float_to_half_bits(d * 1.125f));
        const float id = 1 / d;
        for (int ib = 0; ib < 8; ++ib) {
            int l = clamp_code(nearest_int(0.5f * (id * scales[ib] - 1)), 7);
            if (shifts[ib] == -1) l |= 8;
            high[ib] = static_cast<uint16_t>(high[ib] | (l << 12));
        }
    }
    for (int ib = 0; ib < 8; ++ib) store_u16le(out + 34 + 2 * ib, high[ib]);
}

void iq1_m(const float* x, const float* importance, uint8_t* out) {
    const RefIqGrid& g = iq_grids::grid(Grid::iq1);
    constexpr int kBlock = 16;
    constexpr uint8_t kShiftMasks[4] = {0x00, 0x80, 0x08, 0x88};
    std::memset(out, 0, 56);
    uint8_t* qs = out;
    uint8_t* qh = out + 32;
    float scales[16];
    int shifts[16];
    float max_scale = 0;
    const float sigma2 = 2 * sum_of_squares(x) / kSuperBlock;
    // Variant v (0..3) shifts the first group of 8 up for v < 2, the second for even v.
    const auto levels_of = [](int variant, int group) {
        const bool up = group == 0 ? variant < 2 : variant % 2 == 0;
        return up ? kShiftedUp : kShiftedDown;
    };
    for (int ib = 0; ib < 16; ++ib) {
        const float* xb = x + kBlock * ib;
        float weight[kBlock];
        value_weights(xb, importance ? importance + kBlock * ib : nullptr, sigma2, kBlock,
                      Plain::x_squared, weight);
        float max = std::fabs(xb[0]);
        for (int i = 1; i < kBlock; ++i) max = larger(max, std::fabs(xb[i]));
        if (max < 1e-7f) {
            scales[ib] = 0;
            shifts[ib] = 0;
            continue;
        }
        Ranked ranked[kBlock];
        rank_values(xb, kBlock, ranked);
        float best = -FLT_MAX, scale = max;
        int first = -1, second = -1, best_variant = -1;
        for (int i1 = 0; i1 <= kBlock; ++i1) {
            for (int i2 = i1; i2 <= kBlock; ++i2) {
                float sum_qx[4] = {}, sum_q2[4] = {};
                for (int j = 0; j < kBlock; ++j) {
                    const int i = ranked[j].index;
                    const int level = j < i1 ? 0 : j < i2 ? 1 : 2;
                    for (int v = 0; v < 4; ++v) {
                        const float q = levels_of(v, i < kBlock / 2 ? 0 : 1)[level];
                        sum_qx[v] += weight[i] * q * xb[i];
                        sum_q2[v] += weight[i] * q * q;
                    }
                }
                for (int v = 0; v < 4; ++v) {
                    if (sum_q2[v] > 0 && sum_qx[v] * sum_qx[v] > best * sum_q2[v]) {
                        scale = sum_qx[v] / sum_q2[v];
                        best = scale * sum_qx[v];
                        first = i1;
                        second = i2;
                        best_variant = v;
                    }
                }
            }
        }
        if (first < 0 || second < 0 || best_variant < 0) {
            scales[ib] = 0;
            shifts[ib] = 0;
            continue;
        }
        int8_t codes[kBlock];
        split_codes(ranked, kBlock, first, second, codes);
        if (scale < 0) {
            for (int j = 0; j < kBlock; ++j) codes[j] = static_cast<int8_t>(2 - codes[j]);
            scale = -scale;
            best_variant = 3 - best_variant;  // both shifts flip
        }
        bool on_grid = true;
        int index[2];
        for (int k = 0; k < 2; ++k)
            index[k] = iq1_group_index(g, codes + 8 * k, xb + 8 * k, weight + 8 * k, scale,
                                       levels_of(best_variant, k), &on_grid);
        if (!on_grid) {
            float sum_qx = 0, sum_q2 = 0;
            for (int k = 0; k < 2; ++k)
                iq1_group_sums(g, index[k], levels_of(best_variant, k), 1, false, xb + 8 * k,
                               weight + 8 * k, &sum_qx, &sum_q2);
            if (sum_qx > 0 && sum_q2 > 0) scale = sum_qx / sum_q2;
        }
        qs[2 * ib] = static_cast<uint8_t>(index[0] & 255);
        qs[2 * ib + 1] = static_cast<uint8_t>(index[1] & 255);
        qh[ib] = static_cast<uint8_t>((index[0] >> 8) | ((index[1] >> 8) << 4));
        scales[ib] = scale;
        shifts[ib] = best_variant;
        max_scale = larger(max_scale, scale);
    }
    if (!max_scale) return;
    uint16_t packed[4] = {};  // 3-bit scale codes, the fp16 super-block scale in the top nibbles
    float d = max_scale / 15;
    const float id = 1 / d;
    float sum_qx = 0, sum_q2 = 0;
    for (int ib = 0; ib < 16; ++ib) {
        const int l = clamp_code(nearest_int(0.5f * (id * scales[ib] - 1)), 7);
        packed[ib / 4] = static_cast<uint16_t>(packed[ib / 4] | (l << (3 * (ib % 4))));
        qh[ib] = static_cast<uint8_t>(qh[ib] | kShiftMasks[shifts[ib]]);
        const float* xb = x + kBlock * ib;
        float weight[kBlock];
        value_weights(xb, importance ? importance + kBlock * ib : nullptr, sigma2, kBlock,
                      Plain::x_squared, weight);
        for (int k = 0; k < 2; ++k) {
            const int index = qs[2 * ib + k] | ((qh[ib] << (8 - 4 * k)) & 0x700);
            iq1_group_sums(g, index, levels_of(shifts[ib], k), static_cast<float>(2 * l + 1), true,
                           xb + 8 * k, weight + 8 * k, &sum_qx, &sum_q2);
        }
    }
    if (sum_q2 > 0) d = sum_qx / sum_q2;
    const uint16_t half = float_to_half_bits(d * 1.1125f);
    packed[0] = static_cast<uint16_t>(packed[0] | ((half & 0x000f) << 12));
    packed[1] = static_cast<uint16_t>(packed[1] | ((half & 0x00f0) << 8));
    packed[2] = static_cast<uint16_t>(packed[2] | ((half & 0x0f00) << 4));
    packed[3] = static_cast<uint16_t>(packed[3] | (half & 0xf000));
    for (int i = 0; i < 4; ++i) store_u16le(out + 48 + 2 * i, packed[i]);
}

}  // namespace iq_search

void iq2_xxs(const float* x, const float* importance, uint8_t* out) {
    iq_search::iq2_xxs(x, importance, out);
}
void iq2_xs(const float* x, const float* importance, uint8_t* out) {
    iq_search::iq2_xs(x, importance, out);
}
void iq2_s(const float* x, const float* importance, uint8_t* out) {
    iq_search::iq2_s(x, importance, out);
}
void iq3_xxs(const float* x, const float* importance, uint8_t* out) {
    iq_search::iq3_xxs(x, importance, out);
}
void iq3_s(const float* x, const float* importance, uint8_t* out) {
    iq_search::iq3_s(x, importance, out);
}
void iq1_s(const float* x, const float* importance, uint8_t* out) {
    iq_search::iq1_s(x, importance, out);
}
void iq1_m(const float* x, const float* importance, uint8_t* out) {
    iq_search::iq1_m(x, importance, out);
}

}  // namespace rebox::verify_ref::quant_blocks
