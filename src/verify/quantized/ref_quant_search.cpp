// verify's rewrite of ggml's group scale searches (see ref_quant_search.hpp). Written as plain
// loops over one group; the loops that compute a trial's sums are one helper each so the trial and
// the accepted codes cannot drift apart.
#include "verify/quantized/ref_quant_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rebox::verify_ref::quant_search {

namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: a group below it is all zero

int clamp_int(int value, int low, int high) {
    return value < low ? low : value > high ? high : value;
}

// The value with the largest magnitude (first wins on ties) and that magnitude.
void largest_magnitude(int n, const float* x, float* largest, float* magnitude) {
    float best = 0, best_value = 0;
    for (int i = 0; i < n; ++i) {
        const float a = std::fabs(x[i]);
        if (a > best) {
            best = a;
            best_value = x[i];
        }
    }
    *largest = best_value;
    *magnitude = best;
}

struct SymmetricSums {
    float sum_lx = 0;  // sum w*x*l
    float sum_l2 = 0;  // sum w*l*l
};

// The symmetric code of x at inverse scale `inverse`, before the + nmax offset.
int symmetric_code(float inverse, float x, int nmax) {
    return clamp_int(nearest_int(inverse * x), -nmax, nmax - 1);
}

SymmetricSums symmetric_trial(int n, int nmax, const float* x, const float* weights,
                              float inverse) {
    SymmetricSums sums;
    for (int i = 0; i < n; ++i) {
        const int l = symmetric_code(inverse, x[i], nmax);
        const float w = weights ? weights[i] : x[i] * x[i];
        sums.sum_lx += w * x[i] * static_cast<float>(l);
        sums.sum_l2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    return sums;
}

void store_symmetric_codes(int n, int nmax, const float* x, float inverse, int8_t* codes) {
    for (int i = 0; i < n; ++i)
        codes[i] = static_cast<int8_t>(symmetric_code(inverse, x[i], nmax) + nmax);
}

// The weighted error of an affine fit: sum w * e, e = (scale*code + min - x) squared or absolute.
float affine_error(int n, const float* x, const float* weights, const uint8_t* codes, float scale,
                   float min, bool absolute_error) {
    float error = 0;
    for (int i = 0; i < n; ++i) {
        float diff = scale * static_cast<float>(codes[i]) + min - x[i];
        diff = absolute_error ? std::fabs(diff) : diff * diff;
        error += weights[i] * diff;
    }
    return error;
}

void affine_codes(int n, int nmax, const float* x, float inverse, float min, uint8_t* codes) {
    for (int i = 0; i < n; ++i)
        codes[i] = static_cast<uint8_t>(clamp_int(nearest_int(inverse * (x[i] - min)), 0, nmax));
}

}  // namespace

int nearest_int(float f) {
    const float shifted = f + 12582912.f;
    int32_t bits;
    std::memcpy(&bits, &shifted, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

int32_t truncate_like_x86(float f) {
    if (!(f > -2147483904.f && f < 2147483648.f)) return INT32_MIN;  // NaN or outside int32
    return static_cast<int32_t>(f);
}

float symmetric_scale(int n, int nmax, const float* x, const float* weights, int8_t* codes) {
    float max = 0, amax = 0;
    largest_magnitude(n, x, &max, &amax);
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) codes[i] = 0;
        return 0.f;
    }
    float inverse = static_cast<float>(-nmax) / max;
    store_symmetric_codes(n, nmax, x, inverse, codes);
    SymmetricSums sums = symmetric_trial(n, nmax, x, weights, inverse);
    float scale = sums.sum_l2 ? sums.sum_lx / sums.sum_l2 : 0.0f;
    float best = scale * sums.sum_lx;
    for (int step = -9; step <= 9; ++step) {
        if (step == 0) continue;
        inverse = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
        sums = symmetric_trial(n, nmax, x, weights, inverse);
        if (sums.sum_l2 > 0 && sums.sum_lx * sums.sum_lx > best * sums.sum_l2) {
            store_symmetric_codes(n, nmax, x, inverse, codes);
            scale = sums.sum_lx / sums.sum_l2;
            best = scale * sums.sum_lx;
        }
    }
    return scale;
}

float symmetric_scale_refined(int n, int nmax, const float* x, int8_t* codes) {
    float max = 0, amax = 0;
    largest_magnitude(n, x, &max, &amax);
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) codes[i] = 0;
        return 0.f;
    }
    const float inverse = static_cast<float>(-nmax) / max;
    float sum_lx = 0, sum_l2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = symmetric_code(inverse, x[i], nmax);
        codes[i] = static_cast<int8_t>(l);
        const float w = x[i] * x[i];
        sum_lx += w * x[i] * static_cast<float>(l);
        sum_l2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    for (int round = 0; round < 5; ++round) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const float old_l = static_cast<float>(codes[i]);
            float trial_lx = sum_lx - w * x[i] * old_l;
            if (!(trial_lx > 0)) continue;
            float trial_l2 = sum_l2 - w * old_l * old_l;
            const int new_l = clamp_int(nearest_int(x[i] * trial_l2 / trial_lx), -nmax, nmax - 1);
            if (new_l == codes[i]) continue;
            trial_lx += w * x[i] * static_cast<float>(new_l);
            trial_l2 += w * static_cast<float>(new_l) * static_cast<float>(new_l);
            if (trial_l2 > 0 && trial_lx * trial_lx * sum_l2 > sum_lx * sum_lx * trial_l2) {
                codes[i] = static_cast<int8_t>(new_l);
                sum_lx = trial_lx;
                sum_l2 = trial_l2;
                ++changed;
            }
        }
        if (!changed) break;
    }
    for (int i = 0; i < n; ++i) codes[i] = static_cast<int8_t>(codes[i] + nmax);
    return sum_l2 > 0.0f ? sum_lx / sum_l2 : 0.0f;
}

float affine_scale(int n, int nmax, const float* x, const float* weights, uint8_t* codes,
                   float* negated_min, const AffineGrid& grid) {
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += weights[i];
        sum_x += weights[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) codes[i] = 0;
        *negated_min = -min;
        return 0.f;
    }
    const float nmax_f = static_cast<float>(nmax);
    float inverse = nmax_f / (max - min);
    float scale = 1 / inverse;
    affine_codes(n, nmax, x, inverse, min, codes);
    float best_error = affine_error(n, x, weights, codes, scale, min, grid.absolute_error);
    uint8_t trial[256];
    // `min` is the current best fit's min: an accepted trial moves the grid's origin for the next.
    for (int step = 0; step <= grid.steps; ++step) {
        inverse = (grid.rmin + grid.rdelta * static_cast<float>(step) + nmax_f) / (max - min);
        affine_codes(n, nmax, x, inverse, min, trial);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const float l = static_cast<float>(trial[i]);
            sum_l += weights[i] * l;
            sum_l2 += weights[i] * l * l;
            sum_xl += weights[i] * l * x[i];
        }
        const float det = sum_w * sum_l2 - sum_l * sum_l;
        if (!(det > 0)) continue;
        float trial_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
        float trial_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
        if (trial_min > 0) {
            trial_min = 0;
            trial_scale = sum_xl / sum_l2;
        }
        const float error =
            affine_error(n, x, weights, trial, trial_scale, trial_min, grid.absolute_error);
        if (error < best_error) {
            std::memcpy(codes, trial, static_cast<size_t>(n));
            best_error = error;
            scale = trial_scale;
            min = trial_min;
        }
    }
    *negated_min = -min;
    return scale;
}

float positive_scale(int n, int nmax, const float* x, uint8_t* codes, const float* weights) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = max > x[i] ? max : x[i];  // ggml's MAX(max, x)
    if (max < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) codes[i] = 0;
        return 0.f;
    }
    const float nmax_f = static_cast<float>(nmax);
    float inverse = nmax_f / max;
    for (int i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(nearest_int(inverse * x[i]));
    const float first_scale = 1 / inverse;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - first_scale * static_cast<float>(codes[i]);
        best_error += weights[i] * diff * diff;
    }
    for (int step = -4; step <= 4; ++step) {
        if (step == 0) continue;
        const float trial_inverse = (0.1f * static_cast<float>(step) + nmax_f) / max;
        const float trial_scale = 1 / trial_inverse;
        float error = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::min(nmax, nearest_int(trial_inverse * x[i]));
            const float diff = x[i] - trial_scale * static_cast<float>(l);
            error += weights[i] * diff * diff;
        }
        if (error < best_error) {
            best_error = error;
            inverse = trial_inverse;
        }
    }
    float sum_lx = 0, sum_l2 = 0;
    for (int i = 0; i < n; ++i) {
        // The sums take the int code; a negative one wraps only in the stored uint8.
        const int code = std::min(nmax, nearest_int(inverse * x[i]));
        codes[i] = static_cast<uint8_t>(code);
        const float l = static_cast<float>(code);
        sum_lx += weights[i] * x[i] * l;
        sum_l2 += weights[i] * l * l;
    }
    for (int round = 0; round < 5; ++round) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = weights[i];
            const float old_l = static_cast<float>(codes[i]);
            float trial_lx = sum_lx - w * x[i] * old_l;
            float trial_l2 = sum_l2 - w * old_l * old_l;
            if (!(trial_lx > 0 && trial_l2 > 0)) continue;
            const int new_l = std::min(nmax, nearest_int(x[i] * trial_l2 / trial_lx));
            if (new_l == codes[i]) continue;
            trial_lx += w * x[i] * static_cast<float>(new_l);
            trial_l2 += w * static_cast<float>(new_l) * static_cast<float>(new_l);
            if (trial_lx * trial_lx * sum_l2 > sum_lx * sum_lx * trial_l2) {
                codes[i] = static_cast<uint8_t>(new_l);
                sum_lx = trial_lx;
                sum_l2 = trial_l2;
                ++changed;
            }
        }
        if (!changed) break;
    }
    return sum_l2 > 0.0f ? sum_lx / sum_l2 : 0.0f;
}

}  // namespace rebox::verify_ref::quant_search
