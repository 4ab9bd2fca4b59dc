// Q1_0 (128 values: fp16 d = mean |x|, one sign bit per value, 1 for x >= 0) and Q2_0 (64
// values: fp16 d = amax, 2-bit codes round(x/d) + 1 clamped to 0..3, four per byte from the low
// bits): ggml's reference quantizers, which ggml also runs row by row when given an imatrix,
// with the same result. The sum of |x| runs in value order in binary32, as ggml's; Q2_0's
// (int)roundf is x86's truncating conversion (INT32_MIN for NaN, so the code clamps to 0).
#include <cmath>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"

namespace rebox::quant {

void store_ggml_fp16(uint8_t* y, float d) { store_fp16(y, d); }

void quantize_q1_0_ref(const float* x, uint8_t* y, int64_t nblocks) {
    for (int64_t i = 0; i < nblocks; ++i, x += 128, y += 18) {
        float sum_abs = 0.0f;
        for (int j = 0; j < 128; ++j) sum_abs += std::fabs(x[j]);
        store_fp16(y, sum_abs / 128);
        for (int j = 0; j < 16; ++j) {
            uint8_t bits = 0;
            for (int b = 0; b < 8; ++b)
                if (x[8 * j + b] >= 0.0f) bits = static_cast<uint8_t>(bits | (1u << b));
            y[2 + j] = bits;
        }
    }
}

void quantize_q2_0_ref(const float* x, uint8_t* y, int64_t nblocks) {
    for (int64_t i = 0; i < nblocks; ++i, x += 64, y += 18) {
        float amax = 0.0f;
        for (int j = 0; j < 64; ++j) {
            const float a = std::fabs(x[j]);
            if (a > amax) amax = a;
        }
        const float d = amax;
        const float id = d > 0.0f ? 1.0f / d : 0.0f;
        store_fp16(y, d);
        for (int j = 0; j < 16; ++j) {
            uint8_t packed = 0;
            for (int k = 0; k < 4; ++k) {
                // INT32_MIN (NaN) + 1 stays negative and clamps to 0 below.
                int q = truncate_like_x86(std::round(x[4 * j + k] * id)) + 1;
                if (q < 0) q = 0;
                if (q > 3) q = 3;
                packed = static_cast<uint8_t>(packed | (q << (2 * k)));
            }
            y[2 + j] = packed;
        }
    }
}

}  // namespace rebox::quant
