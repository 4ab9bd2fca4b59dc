// MXFP4 (32 values, one E8M0 exponent, E2M1 codes): ggml's exponent floorf(log2f(amax)) - 2
// (libm's log2f, the same glibc function the prebuilt ggml calls) and the nearest code on the
// doubled grid kvalues_mxfp4 (first one wins on ties). ggml ignores the imatrix for MXFP4.
// NVFP4 (64 values in four sub-blocks of 16, each with a UE4M3 scale ue4m3(amax / 6)): the same
// nearest-code search against the scale read back (halved, as the grid is doubled); byte 8s + j of
// sub-block s holds value j (low nibble) and value j + 8. ggml ignores the imatrix for NVFP4 too.
#include <cmath>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"

namespace rebox::quant {

namespace {

constexpr int8_t kValues[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

int best_index(float x, float d) {
    int best_index = 0;
    float best_err = std::fabs(kValues[0] * d - x);
    for (int i = 1; i < 16; ++i) {
        const float err = std::fabs(kValues[i] * d - x);
        if (err < best_err) {
            best_index = i;
            best_err = err;
        }
    }
    return best_index;
}

}  // namespace

uint8_t mxfp4_block_exponent(float amax, float* d_half) {
    // ggml's (uint8_t)(float): x86 truncation to int32, low byte kept.
    const auto e = static_cast<uint8_t>(
        amax > 0.0f ? truncate_like_x86(std::floor(log2f(amax)) - 2 + 127) : 0);
    *d_half = e8m0_to_fp32_half(e);
    return e;
}

void quantize_mxfp4_ref(const float* x, uint8_t* y, int64_t nblocks) {
    for (int64_t i = 0; i < nblocks; ++i, x += 32, y += 17) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) {
            if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
        }
        float d;
        y[0] = mxfp4_block_exponent(amax, &d);
        for (int j = 0; j < 16; ++j) {
            const int lo = best_index(x[j], d);
            const int hi = best_index(x[j + 16], d);
            y[1 + j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

uint8_t nvfp4_sub_block_scale(float amax, float* d_half) {
    const uint8_t ue = fp32_to_ue4m3(amax / 6.0f);
    *d_half = ue4m3_to_fp32_half(ue);
    return ue;
}

void quantize_nvfp4_ref(const float* x, uint8_t* y, int64_t nblocks) {
    for (int64_t i = 0; i < nblocks; ++i, y += 36) {
        for (int s = 0; s < 4; ++s, x += 16) {
            float amax = 0.0f;
            for (int j = 0; j < 16; ++j) {
                if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
            }
            float d;
            y[s] = nvfp4_sub_block_scale(amax, &d);
            for (int j = 0; j < 8; ++j) {
                const int lo = best_index(x[j], d);
                const int hi = best_index(x[j + 8], d);
                y[4 + 8 * s + j] = static_cast<uint8_t>(lo | (hi << 4));
            }
        }
    }
}

}  // namespace rebox::quant
