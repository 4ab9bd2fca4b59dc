// verify's re-quantizer for the table ("non-linear") types: IQ4_NL (32 values, one fp16 scale),
// IQ4_XS (256 values, 8 sub-blocks with 6-bit scales under one fp16 scale), both on ggml's 16-entry
// kvalues_iq4nl grid, and MXFP4 (32 values, an E8M0 power-of-two scale, the doubled E2M1 grid).
// IQ4 is what ggml_quantize_chunk runs (quantize_iq4_nl / quantize_iq4_xs with 7 trial scales each
// side): without importance the weights are x^2 (not the ntry=-1 quantize_row_iq4_nl_ref, which no
// file-writing path calls), with it importance * sqrt(sigma2 + x^2), sigma2 = 2 * mean square of
// the 32 (IQ4_NL) or 256 (IQ4_XS) values. MXFP4 ignores importance. NVFP4 (64 values, four
// sub-blocks of 16 each with a UE4M3 scale of amax / 6) takes MXFP4's code search at its scale.
#include <cmath>
#include <cstring>

#include "verify/quantized/ref_half_round.hpp"
#include "verify/quantized/ref_quant_search.hpp"
#include "verify/quantized/ref_quantize_blocks.hpp"
#include "verify/values/ref_fp4.hpp"

namespace rebox::verify_ref::quant_blocks {

namespace {

using quant_search::nearest_int;

constexpr int8_t kIq4Grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                 1,    13,   25,  38,  53,  69,  89,  113};
constexpr int8_t kFp4Grid[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
constexpr int kTrials = 7;  // inverse scales (grid[0] + t) / max for t = -7..7

// The grid entry nearest to x (ggml's best_index_int8: ends clamp, then bisection; a tie between
// two neighbours goes to the upper one).
int nearest_grid_index(float x) {
    if (x <= kIq4Grid[0]) return 0;
    if (x >= kIq4Grid[15]) return 15;
    int low = 0, high = 15;
    while (high - low > 1) {
        const int mid = (low + high) / 2;
        if (x < kIq4Grid[mid])
            high = mid;
        else
            low = mid;
    }
    return x - kIq4Grid[high - 1] < kIq4Grid[high] - x ? high - 1 : high;
}

struct GridFit {
    float sum_qx = 0;  // sum w*q*x
    float sum_q2 = 0;  // sum w*q*q
};

GridFit grid_fit(const float* x, const float* w, float inverse, uint8_t* codes_or_null) {
    GridFit fit;
    for (int j = 0; j < 32; ++j) {
        const int index = nearest_grid_index(inverse * x[j]);
        if (codes_or_null) codes_or_null[j] = static_cast<uint8_t>(index);
        const float q = kIq4Grid[index];
        fit.sum_qx += w[j] * q * x[j];
        fit.sum_q2 += w[j] * q * q;
    }
    return fit;
}

// The best scale of one 32-value sub-block on the IQ4 grid (0 when the sub-block is all below
// 1e-15); the codes of the first trial are left in `codes` (ggml re-derives them afterwards).
float sub_block_scale(const float* x, const float* importance, float sigma2, uint8_t* codes) {
    float w[32];
    for (int j = 0; j < 32; ++j)
        w[j] = importance ? importance[j] * std::sqrt(sigma2 + x[j] * x[j]) : x[j] * x[j];
    float magnitude = 0, max = 0;
    for (int j = 0; j < 32; ++j) {
        if (std::fabs(x[j]) > magnitude) {
            magnitude = std::fabs(x[j]);
            max = x[j];
        }
    }
    if (magnitude < 1e-15f) return 0;
    const float first_d = -max / kIq4Grid[0];
    GridFit fit = grid_fit(x, w, 1 / first_d, codes);
    float d = fit.sum_q2 > 0 ? fit.sum_qx / fit.sum_q2 : 0.f;
    float best = d * fit.sum_qx;
    for (int t = -kTrials; t <= kTrials; ++t) {
        fit = grid_fit(x, w, static_cast<float>(t + kIq4Grid[0]) / max, nullptr);
        if (fit.sum_q2 > 0 && fit.sum_qx * fit.sum_qx > best * fit.sum_q2) {
            d = fit.sum_qx / fit.sum_q2;
            best = d * fit.sum_qx;
        }
    }
    return d;
}

void pack_codes(const uint8_t* codes, uint8_t* qs) {
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(codes[j] | (codes[j + 16] << 4));
}

float doubled_e2m1_unit(uint8_t e) {  // ggml's e8m0_to_fp32_half: 2^(e - 128)
    const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

// The doubled E2M1 grid entry nearest to x at `unit` (the first of equals, as ggml's search).
uint8_t nearest_fp4_code(float x, float unit) {
    int best = 0;
    float best_error = std::fabs(kFp4Grid[0] * unit - x);
    for (int k = 1; k < 16; ++k) {
        const float error = std::fabs(kFp4Grid[k] * unit - x);
        if (error < best_error) {
            best = k;
            best_error = error;
        }
    }
    return static_cast<uint8_t>(best);
}

// ggml_fp32_to_ue4m3 by the value's binade: x = m * 2^E with m in [1, 2); at E >= -6 the 3-bit
// mantissa (m - 1) * 8 rounded half up (a carry moves to the next binade), exponent field E + 7,
// 448 and above (or a carry to field 15) 0x7E; below 2^-6 the subnormal x * 2^9 rounded half up
// as ggml adds 0.5 in binary32, 0 under 1.
uint8_t ue4m3_round(float x) {
    if (!(x > 0.0f)) return 0;
    x = x > 448.0f ? 448.0f : x;
    if (x < 0x1.0p-6f) {
        const auto steps = static_cast<int>(x * 512.0f + 0.5f);
        return static_cast<uint8_t>(steps < 1 ? 0 : steps > 7 ? 7 : steps);
    }
    int binade = 0;
    const float fraction = std::frexp(x, &binade);  // x = fraction * 2^binade, fraction in [0.5, 1)
    const float eighths = (fraction * 2.0f - 1.0f) * 8.0f;  // exact: 23 mantissa bits
    int mantissa = static_cast<int>(eighths);
    if (eighths - static_cast<float>(mantissa) >= 0.5f) ++mantissa;
    int field = binade - 1 + 7;
    if (mantissa == 8) {
        mantissa = 0;
        ++field;
    }
    if (field >= 15) return 0x7e;
    return static_cast<uint8_t>((field << 3) | mantissa);
}

}  // namespace

void iq4_nl(const float* x, const float* importance, uint8_t* out) {
    float sigma2 = 0;
    for (int j = 0; j < 32; ++j) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / 32;
    uint8_t codes[32];
    const float d = sub_block_scale(x, importance, sigma2, codes);
    store_u16le(out, float_to_half_bits(d));
    const float inverse = d ? 1 / d : 0;
    for (int j = 0; j < 32; ++j)
        codes[j] = static_cast<uint8_t>(nearest_grid_index(inverse * x[j]));
    pack_codes(codes, out + 2);
}

void iq4_xs(const float* x, const float* importance, uint8_t* out) {
    float sigma2 = 0;
    for (int j = 0; j < 256; ++j) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / 256;
    float scales[8];
    float max_scale = 0, magnitude = 0;
    uint8_t codes[32];
    for (int b = 0; b < 8; ++b) {
        scales[b] =
            sub_block_scale(x + 32 * b, importance ? importance + 32 * b : nullptr, sigma2, codes);
        if (std::fabs(scales[b]) > magnitude) {
            magnitude = std::fabs(scales[b]);
            max_scale = scales[b];
        }
    }
    // The super-block scale: d = -max_scale / 32 (so -0.0 for an all-zero block, as ggml stores
    // it), sub-block scale codes l in [-32, 31], codes re-derived from d * l (d not fp16-rounded).
    const float d = -max_scale / 32;
    const float inverse = d ? 1 / d : 0.f;
    uint16_t scales_high = 0;
    uint8_t* scales_low = out + 4;
    std::memset(scales_low, 0, 4);
    for (int b = 0; b < 8; ++b) {
        int l = nearest_int(inverse * scales[b]);
        l = l < -32 ? -32 : l > 31 ? 31 : l;
        const float sub_d = d * static_cast<float>(l);
        const float sub_inverse = sub_d ? 1 / sub_d : 0.f;
        for (int j = 0; j < 32; ++j)
            codes[j] = static_cast<uint8_t>(nearest_grid_index(sub_inverse * x[32 * b + j]));
        pack_codes(codes, out + 8 + 16 * b);
        l += 32;
        scales_low[b / 2] = static_cast<uint8_t>(scales_low[b / 2] | ((l & 0xf) << (4 * (b % 2))));
        scales_high = static_cast<uint16_t>(scales_high | ((l >> 4) << (2 * b)));
    }
    store_u16le(out, float_to_half_bits(d));
    store_u16le(out + 2, scales_high);
}

void mxfp4(const float* x, uint8_t* out) {
    float amax = 0;
    for (int j = 0; j < 32; ++j)
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
    // E8M0 exponent floor(log2(amax)) - 2 + 127, through libm's log2f as ggml computes it (a value
    // just below a power of two may round up there), converted as x86 converts float -> uint8.
    const uint8_t e = amax > 0.0f ? static_cast<uint8_t>(quant_search::truncate_like_x86(
                                        std::floor(std::log2(amax)) - 2 + 127))
                                  : 0;
    const float unit = doubled_e2m1_unit(e);
    out[0] = e;
    uint8_t codes[32];
    for (int j = 0; j < 32; ++j) codes[j] = nearest_fp4_code(x[j], unit);
    pack_codes(codes, out + 1);
}

void nvfp4(const float* x, uint8_t* out) {
    for (int s = 0; s < 4; ++s, x += 16) {
        float amax = 0;
        for (int j = 0; j < 16; ++j)
            if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
        const uint8_t scale = ue4m3_round(amax / 6.0f);
        out[s] = scale;
        const float unit = ue4m3_half(scale);
        for (int j = 0; j < 8; ++j) {
            out[4 + 8 * s + j] = static_cast<uint8_t>(nearest_fp4_code(x[j], unit) |
                                                      (nearest_fp4_code(x[j + 8], unit) << 4));
        }
    }
}

}  // namespace rebox::verify_ref::quant_blocks
