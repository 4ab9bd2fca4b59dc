// Q2_K (16 sub-blocks of 16, 2-bit codes, 4-bit scales and mins): ggml's reference search
// (make_qkx2 with |x| weights, mean absolute error) and its imatrix search (make_qkx3 with
// imatrix * sqrt(sigma2 + x^2), sigma2 = mean x^2 of the super-block, then make_qp on the scales).
#include <cmath>
#include <cstring>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"
#include "quantize/imatrix_weights.hpp"
#include "quantize/k_block_layout.hpp"
#include "quantize/scale_search.hpp"

namespace rebox::quant {

namespace {

constexpr int kBytes = 84;  // scales[16], qs[64], d, dmin

// Recomputes the codes from the stored (fp16-rounded) d, dmin and 4-bit scales, then packs.
void requantize_and_pack(const float* x, uint8_t* y, uint8_t* L) {
    const float d_all = load_fp16(y + 80);
    const float dmin_all = load_fp16(y + 82);
    for (int j = 0; j < 16; ++j) {
        const float d = d_all * static_cast<float>(y[j] & 0xf);
        if (d == 0.f) continue;
        const float dm = dmin_all * static_cast<float>(y[j] >> 4);
        for (int ii = 0; ii < 16; ++ii) {
            const int l = nearest_int((x[16 * j + ii] + dm) / d);
            L[16 * j + ii] = static_cast<uint8_t>(l < 0 ? 0 : (l > 3 ? 3 : l));
        }
    }
    pack_2bit_codes(L, y + 16);
}

}  // namespace

void quantize_q2_k_ref(const float* x, uint8_t* y, int64_t nblocks) {
    uint8_t L[kSuperBlock];
    uint8_t Laux[16];
    float weights[16];
    float mins[16];
    float scales[16];
    for (int64_t i = 0; i < nblocks; ++i, x += kSuperBlock, y += kBytes) {
        float max_scale = 0;
        float max_min = 0;
        for (int j = 0; j < 16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = make_qkx_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux,
                                        -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            const float iscale = 15.f / max_scale;
            for (int j = 0; j < 16; ++j)
                y[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
            store_fp16(y + 80, max_scale / 15.f);
        } else {
            std::memset(y, 0, 16);
            store_fp16(y + 80, 0.f);
        }
        if (max_min > 0) {
            const float iscale = 15.f / max_min;
            for (int j = 0; j < 16; ++j) {
                y[j] = static_cast<uint8_t>(y[j] | (nearest_int(iscale * mins[j]) << 4));
            }
            store_fp16(y + 82, max_min / 15.f);
        } else {
            store_fp16(y + 82, 0.f);
        }
        requantize_and_pack(x, y, L);
    }
}

void quantize_q2_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    uint8_t L[kSuperBlock];
    uint8_t Laux[16];
    float mins[16];
    float scales[16];
    float sw[16];
    float weight[16];
    uint8_t Ls[16], Lm[16];
    for (int64_t i = 0; i < n_per_row / kSuperBlock; ++i, x += kSuperBlock, y += kBytes) {
        const float sigma2 = super_block_sum_x2(x) / kSuperBlock;
        for (int j = 0; j < 16; ++j) {
            sw[j] = imatrix_weights(x + 16 * j, qw + kSuperBlock * i + 16 * j, sigma2, 16, weight);
            scales[j] = make_qkx_quants(16, 3, x + 16 * j, weight, L + 16 * j, &mins[j], Laux,
                                        -0.9f, 0.05f, 36, false);
        }
        store_fp16(y + 80, make_qp_quants(16, 15, scales, Ls, sw));
        store_fp16(y + 82, make_qp_quants(16, 15, mins, Lm, sw));
        for (int j = 0; j < 16; ++j) y[j] = static_cast<uint8_t>(Ls[j] | (Lm[j] << 4));
        requantize_and_pack(x, y, L);
    }
}

}  // namespace rebox::quant
