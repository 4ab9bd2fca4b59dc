// Q6_K (16 sub-blocks of 16, 6-bit codes split into ql/qh, int8 scales): ggml's make_qx_quants
// per sub-block, weighted by x^2 (reference) or by the raw imatrix values (no sigma2 factor:
// ggml's imatrix path uses the importance values as they are), then one int8 scale per
// sub-block against the fp16 super-block scale.
#include <cmath>
#include <cstring>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"
#include "quantize/k_block_layout.hpp"
#include "quantize/scale_search.hpp"

namespace rebox::quant {

namespace {

constexpr int kBytes = 210;  // ql[128], qh[64], scales[16] (int8), d
constexpr int kQl = 0, kQh = 128, kScales = 192, kD = 208;

// One super-block; qw is the imatrix slice for it or null (weights x^2).
void quantize_block(const float* x, uint8_t* y, const float* qw) {
    int8_t L[kSuperBlock];
    float scales[16];
    float max_scale = 0;
    float max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
        const float scale =
            make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, qw ? qw + 16 * ib : nullptr);
        scales[ib] = scale;
        const float abs_scale = std::fabs(scale);
        if (abs_scale > max_abs_scale) {
            max_abs_scale = abs_scale;
            max_scale = scale;
        }
    }
    if (max_abs_scale < kGroupMaxEps) {
        std::memset(y, 0, kBytes);
        store_fp16(y + kD, 0.f);
        return;
    }
    const float iscale = -128.f / max_scale;
    store_fp16(y + kD, 1 / iscale);
    auto* y_scales = reinterpret_cast<int8_t*>(y + kScales);
    for (int ib = 0; ib < 16; ++ib) {
        const int l = nearest_int(iscale * scales[ib]);
        y_scales[ib] = static_cast<int8_t>(l < 127 ? l : 127);
    }
    const float d_all = load_fp16(y + kD);
    for (int j = 0; j < 16; ++j) {
        const float d = d_all * static_cast<float>(y_scales[j]);
        if (d == 0.f) continue;
        for (int ii = 0; ii < 16; ++ii) {
            const int l = nearest_int(x[16 * j + ii] / d);
            L[16 * j + ii] = static_cast<int8_t>((l < -32 ? -32 : (l > 31 ? 31 : l)) + 32);
        }
    }
    uint8_t* ql = y + kQl;
    uint8_t* qh = y + kQh;
    for (int j = 0; j < kSuperBlock; j += 128, ql += 64, qh += 32) {
        for (int l = 0; l < 32; ++l) {
            const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
            ql[l] = static_cast<uint8_t>((q1 & 0xf) | ((q3 & 0xf) << 4));
            ql[l + 32] = static_cast<uint8_t>((q2 & 0xf) | ((q4 & 0xf) << 4));
            qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) |
                                         ((q4 >> 4) << 6));
        }
    }
}

}  // namespace

void quantize_q6_k_ref(const float* x, uint8_t* y, int64_t nblocks) {
    for (int64_t i = 0; i < nblocks; ++i) {
        quantize_block(x + kSuperBlock * i, y + kBytes * i, nullptr);
    }
}

void quantize_q6_k_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    for (int64_t i = 0; i < n_per_row / kSuperBlock; ++i) {
        quantize_block(x + kSuperBlock * i, y + kBytes * i, qw + kSuperBlock * i);
    }
}

}  // namespace rebox::quant
