// verify's re-quantizer for the 32-value types Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (ggml-quants.c
// quantize_row_*_ref without importance, quantize_row_*_impl with it). Without importance the
// scale comes from the block's extreme values and codes are truncated after +8.5/+16.5/+0.5 (not
// rounded); with importance each value weighs importance * sqrt(row_sigma2 + x^2) in the same
// scale searches the K types use. Q8_0 ignores importance, as ggml does.
#include <cfloat>
#include <cmath>
#include <cstring>

#include "verify/quantized/ref_half_round.hpp"
#include "verify/quantized/ref_quant_search.hpp"
#include "verify/quantized/ref_quantize_blocks.hpp"

namespace rebox::verify_ref::quant_blocks {

namespace {

using quant_search::truncate_like_x86;

constexpr int kValues = 32;

// The block value with the largest magnitude, sign kept (first one wins on ties).
float signed_extreme(const float* x) {
    float magnitude = 0, extreme = 0;
    for (int j = 0; j < kValues; ++j) {
        if (magnitude < std::fabs(x[j])) {
            magnitude = std::fabs(x[j]);
            extreme = x[j];
        }
    }
    return extreme;
}

void min_max(const float* x, float* min, float* max) {
    *min = FLT_MAX;
    *max = -FLT_MAX;
    for (int j = 0; j < kValues; ++j) {
        if (x[j] < *min) *min = x[j];
        if (x[j] > *max) *max = x[j];
    }
}

void importance_weights(const float* x, const float* importance, float row_sigma2, float* w) {
    for (int j = 0; j < kValues; ++j) w[j] = importance[j] * std::sqrt(row_sigma2 + x[j] * x[j]);
}

// Codes of values j and j+16 into qs[j] (low, high nibble); bit 4 of each into the 32-bit qh.
// ggml masks the low nibble only for the 5-bit types (Q4 codes fit 4 bits, bar a wrapped
// negative cast that ggml then ORs in whole), so the mask is a parameter.
void pack_nibbles(const uint8_t* codes, uint8_t low_mask, uint8_t* qs) {
    for (int j = 0; j < 16; ++j)
        qs[j] = static_cast<uint8_t>((codes[j] & low_mask) | ((codes[j + 16] & 0x0f) << 4));
}

void pack_fifth_bits(const uint8_t* codes, uint8_t* qh) {
    uint32_t bits = 0;
    for (int j = 0; j < kValues; ++j) bits |= static_cast<uint32_t>((codes[j] >> 4) & 1u) << j;
    for (int b = 0; b < 4; ++b) qh[b] = static_cast<uint8_t>(bits >> (8 * b));
}

// Without importance, symmetric: d = extreme / -half_range, code = min(top, trunc(x/d + offset)).
float symmetric_codes(const float* x, int half_range, int top, uint8_t* codes) {
    const float d = signed_extreme(x) / static_cast<float>(-half_range);
    const float inverse = d ? 1.0f / d : 0.0f;
    const float offset = static_cast<float>(half_range) + 0.5f;
    for (int j = 0; j < kValues; ++j) {
        const int code = static_cast<int8_t>(truncate_like_x86(x[j] * inverse + offset));
        codes[j] = static_cast<uint8_t>(code < top ? code : top);
    }
    return d;
}

// Without importance, affine: d = (max - min) / top, code = trunc((x - min)/d + 0.5), clamped to
// top for Q4_1 only (ggml's Q5_1 has no clamp; its uint8 cast keeps the low bits).
void affine_codes(const float* x, int top, bool clamp, uint8_t* codes, float* d_out,
                  float* min_out) {
    float min = 0, max = 0;
    min_max(x, &min, &max);
    const float d = (max - min) / static_cast<float>(top);
    const float inverse = d ? 1.0f / d : 0.0f;
    for (int j = 0; j < kValues; ++j) {
        const float scaled = (x[j] - min) * inverse + 0.5f;
        if (clamp) {
            const int code = static_cast<int8_t>(truncate_like_x86(scaled));
            codes[j] = static_cast<uint8_t>(code < top ? code : top);
        } else {
            codes[j] = static_cast<uint8_t>(truncate_like_x86(scaled));
        }
    }
    *d_out = d;
    *min_out = min;
}

// With importance: symmetric codes from the weighted search (make_qx_quants), stored as l + nmax.
float weighted_symmetric_codes(const float* x, const float* importance, float row_sigma2, int nmax,
                               uint8_t* codes) {
    float w[kValues];
    int8_t signed_codes[kValues];
    importance_weights(x, importance, row_sigma2, w);
    const float d = quant_search::symmetric_scale(kValues, nmax, x, w, signed_codes);
    for (int j = 0; j < kValues; ++j) codes[j] = static_cast<uint8_t>(signed_codes[j]);
    return d;
}

// With importance: affine codes from the weighted grid search (make_qkx3_quants).
float weighted_affine_codes(const float* x, const float* importance, float row_sigma2, int nmax,
                            uint8_t* codes, float* negated_min) {
    float w[kValues];
    importance_weights(x, importance, row_sigma2, w);
    return quant_search::affine_scale(kValues, nmax, x, w, codes, negated_min,
                                      {-0.9f, 0.05f, 36, false});
}

}  // namespace

void q4_0(const float* x, const float* importance, float row_sigma2, uint8_t* out) {
    uint8_t codes[kValues];
    const float d = importance ? weighted_symmetric_codes(x, importance, row_sigma2, 8, codes)
                               : symmetric_codes(x, 8, 15, codes);
    store_u16le(out, float_to_half_bits(d));
    pack_nibbles(codes, 0xff, out + 2);
}

void q5_0(const float* x, const float* importance, float row_sigma2, uint8_t* out) {
    uint8_t codes[kValues];
    const float d = importance ? weighted_symmetric_codes(x, importance, row_sigma2, 16, codes)
                               : symmetric_codes(x, 16, 31, codes);
    store_u16le(out, float_to_half_bits(d));
    pack_fifth_bits(codes, out + 2);
    pack_nibbles(codes, 0x0f, out + 6);
}

namespace {

// Q4_1 / Q5_1: the codes and the d and m they store, either way (m = -(the search's negated min)
// with importance, the block minimum without).
void affine_block(const float* x, const float* importance, float row_sigma2, int top, bool clamp,
                  uint8_t* codes, uint8_t* out) {
    float d = 0, m = 0;
    if (importance) {
        float negated_min = 0;
        d = weighted_affine_codes(x, importance, row_sigma2, top, codes, &negated_min);
        m = -negated_min;
    } else {
        affine_codes(x, top, clamp, codes, &d, &m);
    }
    store_u16le(out, float_to_half_bits(d));
    store_u16le(out + 2, float_to_half_bits(m));
}

}  // namespace

void q4_1(const float* x, const float* importance, float row_sigma2, uint8_t* out) {
    uint8_t codes[kValues];
    affine_block(x, importance, row_sigma2, 15, true, codes, out);
    pack_nibbles(codes, 0xff, out + 4);
}

void q5_1(const float* x, const float* importance, float row_sigma2, uint8_t* out) {
    uint8_t codes[kValues];
    affine_block(x, importance, row_sigma2, 31, false, codes, out);
    pack_fifth_bits(codes, out + 4);
    pack_nibbles(codes, 0x0f, out + 8);
}

void q8_0(const float* x, uint8_t* out) {
    float amax = 0;
    for (int j = 0; j < kValues; ++j) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]);
    const float d = amax / 127.0f;
    const float inverse = d ? 1.0f / d : 0.0f;
    store_u16le(out, float_to_half_bits(d));
    for (int j = 0; j < kValues; ++j)
        out[2 + j] = static_cast<uint8_t>(truncate_like_x86(std::round(x[j] * inverse)));
}

}  // namespace rebox::verify_ref::quant_blocks
