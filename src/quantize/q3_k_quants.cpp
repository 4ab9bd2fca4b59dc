// Q3_K (16 sub-blocks of 16, 3-bit codes split into qs and hmask, 6-bit signed scales): ggml's
// reference search (make_q3_quants) and its imatrix search (make_qx_quants with
// imatrix * sqrt(sigma2 + x^2), sigma2 = 2 * mean x^2 of the super-block, then on the scales).
#include <cmath>
#include <cstring>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"
#include "quantize/imatrix_weights.hpp"
#include "quantize/k_block_layout.hpp"
#include "quantize/scale_search.hpp"

namespace rebox::quant {

namespace {

constexpr int kBytes = 110;  // hmask[32], qs[64], scales[12], d
constexpr int kHmask = 0, kQs = 32, kScales = 96, kD = 108;

// Recomputes the codes from the stored d and 6-bit scales, splits bit 2 into hmask, packs qs.
void requantize_and_pack(const float* x, uint8_t* y, int8_t* L) {
    const float d_all = load_fp16(y + kD);
    for (int j = 0; j < 16; ++j) {
        const float d = d_all * static_cast<float>(unpack_q3_k_scale(j, y + kScales));
        if (d == 0.f) continue;
        for (int ii = 0; ii < 16; ++ii) {
            const int l = nearest_int(x[16 * j + ii] / d);
            L[16 * j + ii] = static_cast<int8_t>((l < -4 ? -4 : (l > 3 ? 3 : l)) + 4);
        }
    }
    uint8_t codes[kSuperBlock];
    std::memset(y + kHmask, 0, 32);
    int m = 0;
    uint8_t hm = 1;
    for (int j = 0; j < kSuperBlock; ++j) {
        int code = L[j];
        if (code > 3) {
            y[kHmask + m] = static_cast<uint8_t>(y[kHmask + m] | hm);
            code -= 4;
        }
        codes[j] = static_cast<uint8_t>(code);
        if (++m == 32) {
            m = 0;
            hm = static_cast<uint8_t>(hm << 1);
        }
    }
    pack_2bit_codes(codes, y + kQs);
}

}  // namespace

void quantize_q3_k_ref(const float* x, uint8_t* y, int64_t nblocks) {
    int8_t L[kSuperBlock];
    float scales[16];
    for (int64_t i = 0; i < nblocks; ++i, x += kSuperBlock, y += kBytes) {
        float max_scale = 0;
        float amax = 0;
        for (int j = 0; j < 16; ++j) {
            scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
            const float scale = std::fabs(scales[j]);
            if (scale > amax) {
                amax = scale;
                max_scale = scales[j];
            }
        }
        std::memset(y + kScales, 0, 12);
        if (max_scale != 0.f) {
            const float iscale = -32.f / max_scale;
            for (int j = 0; j < 16; ++j) {
                // ggml keeps nearest_int's result in an int8_t before clamping.
                const auto l8 = static_cast<int8_t>(nearest_int(iscale * scales[j]));
                const int l = (l8 < -32 ? -32 : (l8 > 31 ? 31 : l8)) + 32;
                pack_q3_k_scale(j, l, y + kScales);
            }
            store_fp16(y + kD, 1 / iscale);
        } else {
            store_fp16(y + kD, 0.f);
        }
        requantize_and_pack(x, y, L);
    }
}

void quantize_q3_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    int8_t L[kSuperBlock];
    float scales[16];
    float weight[16];
    float sw[16];
    int8_t Ls[16];
    for (int64_t i = 0; i < n_per_row / kSuperBlock; ++i, x += kSuperBlock, y += kBytes) {
        const float sigma2 = 2 * super_block_sum_x2(x) / kSuperBlock;
        for (int j = 0; j < 16; ++j) {
            sw[j] = imatrix_weights(x + 16 * j, qw + kSuperBlock * i + 16 * j, sigma2, 16, weight);
            scales[j] = make_qx_quants(16, 4, x + 16 * j, L + 16 * j, weight);
        }
        std::memset(y + kScales, 0, 12);
        const float d_block = make_qx_quants(16, 32, scales, Ls, sw);
        for (int j = 0; j < 16; ++j) pack_q3_k_scale(j, Ls[j], y + kScales);
        store_fp16(y + kD, d_block);
        requantize_and_pack(x, y, L);
    }
}

}  // namespace rebox::quant
