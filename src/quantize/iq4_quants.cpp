// IQ4_NL (32-value blocks) and IQ4_XS (256-value super-blocks of 8 x 32) on ggml's non-linear
// 4-bit grid kvalues_iq4nl: per 32 values, the weighted best scale over 15 candidates, codes by
// nearest grid value (best_index_int8); IQ4_XS then stores 6-bit sub-block scales against one
// fp16 super-block scale and re-picks the codes. ggml runs the same search (ntry = 7) with and
// without an imatrix; without one the weights are x^2.
#include <cmath>
#include <cstring>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"
#include "quantize/imatrix_weights.hpp"

namespace rebox::quant {

namespace {

constexpr int8_t kValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                1,    13,   25,  38,  53,  69,  89,  113};
constexpr int kNtry = 7;

// Index of the grid value nearest to x (ggml's best_index_int8: bisection, ties to the lower).
int best_index(float x) {
    if (x <= kValues[0]) return 0;
    if (x >= kValues[15]) return 15;
    int ml = 0, mu = 15;
    while (mu - ml > 1) {
        const int mav = (ml + mu) / 2;
        if (x < kValues[mav]) {
            mu = mav;
        } else {
            ml = mav;
        }
    }
    return x - kValues[mu - 1] < kValues[mu] - x ? mu - 1 : mu;
}

// The best scale for 32 values (0 for an all-zero block); L receives the first pass's codes.
float best_block_scale(const float* xb, const float* weight, uint8_t* L) {
    float amax = 0, max = 0;
    for (int j = 0; j < 32; ++j) {
        const float ax = std::fabs(xb[j]);
        if (ax > amax) {
            amax = ax;
            max = xb[j];
        }
    }
    if (amax < kGroupMaxEps) return 0;
    float d = -max / kValues[0];
    float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
        const int l = best_index(id * xb[j]);
        L[j] = static_cast<uint8_t>(l);
        const float q = kValues[l];
        sumqx += weight[j] * q * xb[j];
        sumq2 += weight[j] * q * q;
    }
    d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
    float best = d * sumqx;
    for (int itry = -kNtry; itry <= kNtry; ++itry) {
        id = static_cast<float>(itry + kValues[0]) / max;
        sumqx = 0;
        sumq2 = 0;
        for (int j = 0; j < 32; ++j) {
            const float q = kValues[best_index(id * xb[j])];
            sumqx += weight[j] * q * xb[j];
            sumq2 += weight[j] * q * q;
        }
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

// sigma2 = 2 * mean x^2 over the (super-)block, as ggml computes it (sum * (2/n)).
float iq4_sigma2(const float* x, int n) {
    float sigma2 = 0;
    for (int j = 0; j < n; ++j) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / static_cast<float>(n);
    return sigma2;
}

void sub_block_weights(const float* xb, const float* qw, float sigma2, float* weight) {
    if (qw != nullptr) {
        imatrix_weights(xb, qw, sigma2, 32, weight);
        return;
    }
    for (int j = 0; j < 32; ++j) weight[j] = xb[j] * xb[j];
}

void pack_nibbles(const uint8_t* L, uint8_t* q4, int n) {
    for (int i = 0; i < n / 32; ++i) {
        for (int j = 0; j < 16; ++j) {
            q4[16 * i + j] = static_cast<uint8_t>(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
        }
    }
}

}  // namespace

void quantize_iq4_nl_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    uint8_t L[32];
    float weight[32];
    for (int64_t ib = 0; ib < n_per_row / 32; ++ib, x += 32, y += 18) {
        const float* qwb = qw ? qw + 32 * ib : nullptr;
        const float sigma2 = iq4_sigma2(x, 32);
        sub_block_weights(x, qwb, sigma2, weight);
        const float d = best_block_scale(x, weight, L);
        store_fp16(y, d);
        const float id = d != 0.f ? 1 / d : 0;
        for (int j = 0; j < 32; ++j) L[j] = static_cast<uint8_t>(best_index(id * x[j]));
        pack_nibbles(L, y + 2, 32);
    }
}

void quantize_iq4_xs_row(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    uint8_t L[256];
    float weight[32];
    float scales[8];
    for (int64_t ibl = 0; ibl < n_per_row / 256; ++ibl, x += 256, y += 136) {
        const float* qwb = qw ? qw + 256 * ibl : nullptr;
        const float sigma2 = iq4_sigma2(x, 256);
        float max_scale = 0, amax_scale = 0;
        for (int ib = 0; ib < 8; ++ib) {
            sub_block_weights(x + 32 * ib, qwb ? qwb + 32 * ib : nullptr, sigma2, weight);
            scales[ib] = best_block_scale(x + 32 * ib, weight, L + 32 * ib);
            const float abs_d = std::fabs(scales[ib]);
            if (abs_d > amax_scale) {
                amax_scale = abs_d;
                max_scale = scales[ib];
            }
        }
        // Layout: d (fp16), scales_h (uint16: 2 high bits per sub-block), scales_l[4], qs[128].
        uint16_t scales_h = 0;
        uint8_t* scales_l = y + 4;
        const float d = -max_scale / 32;
        store_fp16(y, d);
        const float id = d != 0.f ? 1 / d : 0.f;
        for (int ib = 0; ib < 8; ++ib) {
            int l = nearest_int(id * scales[ib]);
            l = l < -32 ? -32 : (l > 31 ? 31 : l);
            const float dl = d * static_cast<float>(l);
            const float idl = dl != 0.f ? 1 / dl : 0.f;
            for (int j = 0; j < 32; ++j) {
                L[32 * ib + j] = static_cast<uint8_t>(best_index(idl * x[32 * ib + j]));
            }
            l += 32;
            const auto l_l = static_cast<uint8_t>(l & 0xf);
            const auto l_h = static_cast<uint8_t>(l >> 4);
            if (ib % 2 == 0) {
                scales_l[ib / 2] = l_l;
            } else {
                scales_l[ib / 2] = static_cast<uint8_t>(scales_l[ib / 2] | (l_l << 4));
            }
            scales_h = static_cast<uint16_t>(scales_h | (l_h << (2 * (ib % 8))));
        }
        y[2] = static_cast<uint8_t>(scales_h & 0xff);
        y[3] = static_cast<uint8_t>(scales_h >> 8);
        pack_nibbles(L, y + 8, 256);
    }
}

}  // namespace rebox::quant
