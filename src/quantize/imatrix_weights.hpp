// The importance weights of ggml's imatrix paths: w = imatrix * sqrt(sigma2 + x^2) per value,
// where each type defines its own sigma2 (mean x^2 of the row, or of the super-block, times 1 or
// 2).
#pragma once

#include <cmath>

namespace rebox::quant {

// Fills weight[0..n) and returns their sum in index order (ggml's sw[j]).
inline float imatrix_weights(const float* x, const float* qw, float sigma2, int n, float* weight) {
    for (int l = 0; l < n; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + x[l] * x[l]);
    float sum = 0;
    for (int l = 0; l < n; ++l) sum += weight[l];
    return sum;
}

}  // namespace rebox::quant
