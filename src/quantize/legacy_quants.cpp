// Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (32-value blocks): ggml's reference rounding (truncation after
// +8.5 / +16.5 / +0.5, roundf for Q8_0) and, with an imatrix, its weighted searches over
// w = imatrix * sqrt(sigma2 + x^2), sigma2 being the mean square of the whole row.
#include <cfloat>
#include <cmath>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"
#include "quantize/imatrix_weights.hpp"
#include "quantize/scale_search.hpp"

namespace rebox::quant {

namespace {

constexpr int kBlock = 32;

// The value of largest magnitude in a block, first one wins (ggml's `amax < fabsf(v)` scan).
float signed_absmax(const float* x) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < kBlock; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

void min_and_max(const float* x, float* min, float* max) {
    *min = FLT_MAX;
    *max = -FLT_MAX;
    for (int j = 0; j < kBlock; ++j) {
        if (x[j] < *min) *min = x[j];
        if (x[j] > *max) *max = x[j];
    }
}

// Truncating code of ggml's `MIN(limit, (int8_t)(v))`.
uint8_t truncated_code(float v, int limit) {
    const auto code = static_cast<int8_t>(truncate_like_x86(v));
    return static_cast<uint8_t>(code < limit ? code : limit);
}

// Packs 32 five-bit codes: low nibbles as Q4_0, bit 4 of code j into bit j of qh.
void pack_5bit(const uint8_t* codes, uint8_t* qh_out, uint8_t* qs) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        const uint8_t lo = codes[j];
        const uint8_t hi = codes[j + 16];
        qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
        qh |= ((lo & 0x10u) >> 4) << j;
        qh |= ((hi & 0x10u) >> 4) << (j + 16);
    }
    store_u32(qh_out, qh);
}

// sigma2 of ggml's legacy _impl functions: the mean of x^2 over the whole row.
float row_sigma2(const float* x, int64_t n_per_row) {
    float sum_x2 = 0;
    for (int64_t j = 0; j < n_per_row; ++j) sum_x2 += x[j] * x[j];
    return sum_x2 / static_cast<float>(n_per_row);
}

// Q4_1 (nmax 15, 20-byte blocks) and Q5_1 (nmax 31, 24-byte blocks) with an imatrix: make_qkx3's
// search per block; stores d and -min.
void quantize_with_min_weighted(int nmax, const float* x, uint8_t* y, int64_t n_per_row,
                                const float* qw) {
    const int bytes = nmax == 15 ? 20 : 24;
    const float sigma2 = row_sigma2(x, n_per_row);
    float weight[kBlock];
    uint8_t L[kBlock], Laux[kBlock];
    for (int64_t ib = 0; ib < n_per_row / kBlock; ++ib, x += kBlock, qw += kBlock, y += bytes) {
        imatrix_weights(x, qw, sigma2, kBlock, weight);
        float min;
        const float d =
            make_qkx_quants(kBlock, nmax, x, weight, L, &min, Laux, -0.9f, 0.05f, 36, false);
        store_fp16(y, d);
        store_fp16(y + 2, -min);
        if (nmax == 15) {
            for (int j = 0; j < 16; ++j) y[4 + j] = static_cast<uint8_t>(L[j] | (L[j + 16] << 4));
        } else {
            pack_5bit(L, y + 4, y + 8);
        }
    }
}

}  // namespace

void quantize_q4_0_ref(const float* x, uint8_t* y, int64_t nblocks) {
    for (int64_t i = 0; i < nblocks; ++i, x += kBlock, y += 18) {
        const float d = signed_absmax(x) / -8;
        const float id = d != 0.f ? 1.0f / d : 0.0f;
        store_fp16(y, d);
        for (int j = 0; j < 16; ++j) {
            const uint8_t lo = truncated_code(x[j] * id + 8.5f, 15);
            const uint8_t hi = truncated_code(x[j + 16] * id + 8.5f, 15);
            y[2 + j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

void quantize_q4_0_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    const float sigma2 = row_sigma2(x, n_per_row);
    float weight[kBlock];
    int8_t L[kBlock];
    for (int64_t ib = 0; ib < n_per_row / kBlock; ++ib, x += kBlock, qw += kBlock, y += 18) {
        imatrix_weights(x, qw, sigma2, kBlock, weight);
        store_fp16(y, make_qx_quants(kBlock, 8, x, L, weight));
        for (int j = 0; j < 16; ++j) y[2 + j] = static_cast<uint8_t>(L[j] | (L[j + 16] << 4));
    }
}

void quantize_q4_1_ref(const float* x, uint8_t* y, int64_t nblocks) {
    for (int64_t i = 0; i < nblocks; ++i, x += kBlock, y += 20) {
        float min, max;
        min_and_max(x, &min, &max);
        const float d = (max - min) / 15;
        const float id = d != 0.f ? 1.0f / d : 0.0f;
        store_fp16(y, d);
        store_fp16(y + 2, min);
        for (int j = 0; j < 16; ++j) {
            const uint8_t lo = truncated_code((x[j] - min) * id + 0.5f, 15);
            const uint8_t hi = truncated_code((x[j + 16] - min) * id + 0.5f, 15);
            y[4 + j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

void quantize_q4_1_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    quantize_with_min_weighted(15, x, y, n_per_row, qw);
}

void quantize_q5_0_ref(const float* x, uint8_t* y, int64_t nblocks) {
    uint8_t codes[kBlock];
    for (int64_t i = 0; i < nblocks; ++i, x += kBlock, y += 22) {
        const float d = signed_absmax(x) / -16;
        const float id = d != 0.f ? 1.0f / d : 0.0f;
        store_fp16(y, d);
        for (int j = 0; j < kBlock; ++j) codes[j] = truncated_code(x[j] * id + 16.5f, 31);
        pack_5bit(codes, y + 2, y + 6);
    }
}

void quantize_q5_0_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    const float sigma2 = row_sigma2(x, n_per_row);
    float weight[kBlock];
    int8_t L[kBlock];
    uint8_t codes[kBlock];
    for (int64_t ib = 0; ib < n_per_row / kBlock; ++ib, x += kBlock, qw += kBlock, y += 22) {
        imatrix_weights(x, qw, sigma2, kBlock, weight);
        store_fp16(y, make_qx_quants(kBlock, 16, x, L, weight));
        for (int j = 0; j < kBlock; ++j) codes[j] = static_cast<uint8_t>(L[j]);
        pack_5bit(codes, y + 2, y + 6);
    }
}

void quantize_q5_1_ref(const float* x, uint8_t* y, int64_t nblocks) {
    uint8_t codes[kBlock];
    for (int64_t i = 0; i < nblocks; ++i, x += kBlock, y += 24) {
        float min, max;
        min_and_max(x, &min, &max);
        const float d = (max - min) / 31;
        const float id = d != 0.f ? 1.0f / d : 0.0f;
        store_fp16(y, d);
        store_fp16(y + 2, min);
        // ggml's (uint8_t)(v): no MIN clamp here.
        for (int j = 0; j < kBlock; ++j) {
            codes[j] = static_cast<uint8_t>(truncate_like_x86((x[j] - min) * id + 0.5f));
        }
        pack_5bit(codes, y + 4, y + 8);
    }
}

void quantize_q5_1_weighted(const float* x, uint8_t* y, int64_t n_per_row, const float* qw) {
    quantize_with_min_weighted(31, x, y, n_per_row, qw);
}

void quantize_q8_0_ref(const float* x, uint8_t* y, int64_t nblocks) {
    for (int64_t i = 0; i < nblocks; ++i, x += kBlock, y += 34) {
        float amax = 0.0f;
        for (int j = 0; j < kBlock; ++j) {
            const float a = std::fabs(x[j]);
            amax = amax > a ? amax : a;  // ggml's MAX(amax, fabsf(v))
        }
        const float d = amax / 127;
        const float id = d != 0.f ? 1.0f / d : 0.0f;
        store_fp16(y, d);
        for (int j = 0; j < kBlock; ++j) {
            y[2 + j] = static_cast<uint8_t>(truncate_like_x86(std::round(x[j] * id)));
        }
    }
}

}  // namespace rebox::quant
