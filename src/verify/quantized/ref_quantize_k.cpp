// verify's re-quantizer for the K types Q2_K..Q6_K: one 256-value super-block of 16 (Q2_K, Q3_K,
// Q6_K) or 8 (Q4_K, Q5_K) sub-blocks. Each sub-block gets a scale (and a min) from a scale search;
// the sub-block scales are then quantized to 4/6/8 bits against one fp16 super-block scale, and
// every code is re-derived from the fp16-rounded scales actually stored ("requantize"). Without
// importance these are ggml's quantize_row_*_ref; with it quantize_row_*_impl, whose weights are
// importance * sqrt(sigma2 + x^2) with sigma2 the super-block's mean square (x2 except Q2_K), and
// raw importance for Q6_K. Block layouts: docs/gguf.md and ggml-common.h.
#include <cmath>
#include <cstring>

#include "verify/quantized/ref_half_round.hpp"
#include "verify/quantized/ref_quant_search.hpp"
#include "verify/quantized/ref_quantize_blocks.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref::quant_blocks {

namespace {

using quant_search::AffineGrid;
using quant_search::nearest_int;

constexpr int kValues = 256;

int clamp_int(int value, int low, int high) {
    return value < low ? low : value > high ? high : value;
}

float sum_of_squares(const float* x, int n) {
    float sum = 0;
    for (int i = 0; i < n; ++i) sum += x[i] * x[i];
    return sum;
}

// importance * sqrt(sigma2 + x^2) for n values; returns their sum (the sub-block's weight).
float importance_weights(const float* x, const float* importance, float sigma2, int n, float* w) {
    float sum = 0;
    for (int i = 0; i < n; ++i) w[i] = importance[i] * std::sqrt(sigma2 + x[i] * x[i]);
    for (int i = 0; i < n; ++i) sum += w[i];
    return sum;
}

// Four 2-bit codes per byte: byte l of each 32-byte half holds values l, l+32, l+64, l+96.
void pack_2bit(const uint8_t* codes, uint8_t* qs) {
    for (int half = 0; half < kValues; half += 128) {
        for (int l = 0; l < 32; ++l) {
            const uint8_t* c = codes + half + l;
            qs[half / 4 + l] =
                static_cast<uint8_t>(c[0] | (c[32] << 2) | (c[64] << 4) | (c[96] << 6));
        }
    }
}

// Q4_K / Q5_K: 8 six-bit scales and 8 six-bit mins in 12 bytes (ggml's get_scale_min_k4 layout).
void pack_scale_min_k4(const uint8_t* ls, const uint8_t* lm, uint8_t* packed) {
    std::memset(packed, 0, 12);
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            packed[j] = ls[j];
            packed[j + 4] = lm[j];
        } else {
            packed[j + 4] = static_cast<uint8_t>((ls[j] & 0xf) | ((lm[j] & 0xf) << 4));
            packed[j - 4] = static_cast<uint8_t>(packed[j - 4] | ((ls[j] >> 4) << 6));
            packed[j] = static_cast<uint8_t>(packed[j] | ((lm[j] >> 4) << 6));
        }
    }
}

void unpack_scale_min_k4(const uint8_t* packed, int j, int* scale, int* min) {
    if (j < 4) {
        *scale = packed[j] & 63;
        *min = packed[j + 4] & 63;
    } else {
        *scale = (packed[j + 4] & 0xf) | ((packed[j - 4] >> 6) << 4);
        *min = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
    }
}

// Codes of an affine K type re-derived from the stored fp16 d/dmin and 6-bit scales and mins
// (a sub-block whose scale is zero keeps the search's codes).
void requantize_affine_k4(const float* x, const uint8_t* packed, uint16_t d_bits,
                          uint16_t dmin_bits, int nmax, uint8_t* codes) {
    for (int j = 0; j < 8; ++j) {
        int scale = 0, min = 0;
        unpack_scale_min_k4(packed, j, &scale, &min);
        const float d = half_bits_to_float(d_bits) * static_cast<float>(scale);
        if (!d) continue;
        const float dm = half_bits_to_float(dmin_bits) * static_cast<float>(min);
        for (int i = 0; i < 32; ++i)
            codes[32 * j + i] =
                static_cast<uint8_t>(clamp_int(nearest_int((x[32 * j + i] + dm) / d), 0, nmax));
    }
}

// Sub-block scales and mins of Q4_K / Q5_K: without importance, weights av_x + |x| (av_x the
// sub-block's rms) and ggml's _ref grid; with it, the weighted grid and the sums of weights for
// the super-block search.
struct AffineSubBlocks {
    float scales[8];
    float mins[8];  // negated mins, >= 0
    float weight_sums[8];
};

AffineSubBlocks affine_sub_blocks(const float* x, const float* importance, int nmax,
                                  const AffineGrid& plain_grid, uint8_t* codes) {
    AffineSubBlocks sub{};
    float weights[32];
    const float sigma2 = importance ? 2 * sum_of_squares(x, kValues) / kValues : 0.f;
    for (int j = 0; j < 8; ++j) {
        const float* xs = x + 32 * j;
        if (importance) {
            sub.weight_sums[j] = importance_weights(xs, importance + 32 * j, sigma2, 32, weights);
            sub.scales[j] = quant_search::affine_scale(32, nmax, xs, weights, codes + 32 * j,
                                                       &sub.mins[j], {-0.9f, 0.05f, 36, false});
        } else {
            const float rms = std::sqrt(sum_of_squares(xs, 32) / 32);
            for (int i = 0; i < 32; ++i) weights[i] = rms + std::fabs(xs[i]);
            sub.scales[j] = quant_search::affine_scale(32, nmax, xs, weights, codes + 32 * j,
                                                       &sub.mins[j], plain_grid);
        }
    }
    return sub;
}

// The 6-bit sub-block scales and mins and the fp16 d / dmin of Q4_K and Q5_K.
struct AffineHeader {
    uint16_t d_bits = 0;
    uint16_t dmin_bits = 0;
    uint8_t packed[12] = {};
};

AffineHeader affine_header(const AffineSubBlocks& sub, bool with_importance, bool cap_importance) {
    AffineHeader header;
    uint8_t ls[8], lm[8];
    if (with_importance) {
        float sums[8];
        std::memcpy(sums, sub.weight_sums, sizeof sums);
        const float d = quant_search::positive_scale(8, 63, sub.scales, ls, sums);
        const float m = quant_search::positive_scale(8, 63, sub.mins, lm, sums);
        if (cap_importance) {  // Q5_K caps at 63 again; Q4_K does not
            for (int j = 0; j < 8; ++j) {
                ls[j] = ls[j] < 63 ? ls[j] : 63;
                lm[j] = lm[j] < 63 ? lm[j] : 63;
            }
        }
        header.d_bits = float_to_half_bits(d);
        header.dmin_bits = float_to_half_bits(m);
    } else {
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < 8; ++j) {
            if (sub.scales[j] > max_scale) max_scale = sub.scales[j];
            if (sub.mins[j] > max_min) max_min = sub.mins[j];
        }
        const float inverse_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
        const float inverse_min = max_min > 0 ? 63.f / max_min : 0.f;
        for (int j = 0; j < 8; ++j) {
            const uint8_t s = static_cast<uint8_t>(nearest_int(inverse_scale * sub.scales[j]));
            const uint8_t m = static_cast<uint8_t>(nearest_int(inverse_min * sub.mins[j]));
            ls[j] = s < 63 ? s : 63;
            lm[j] = m < 63 ? m : 63;
        }
        header.d_bits = float_to_half_bits(max_scale / 63.f);
        header.dmin_bits = float_to_half_bits(max_min / 63.f);
    }
    pack_scale_min_k4(ls, lm, header.packed);
    return header;
}

// Q3_K: the 6-bit code (already offset by 32) of sub-block j into the 12 packed bytes.
void pack_q3_scale(int j, int code, uint8_t* packed) {
    if (j < 8)
        packed[j] = static_cast<uint8_t>(code & 0xf);
    else
        packed[j - 8] = static_cast<uint8_t>(packed[j - 8] | ((code & 0xf) << 4));
    packed[8 + j % 4] = static_cast<uint8_t>(packed[8 + j % 4] | ((code >> 4) << (2 * (j / 4))));
}

int unpack_q3_scale(int j, const uint8_t* packed) {
    const int low = j < 8 ? packed[j] & 0xf : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    return static_cast<int8_t>(low | (high << 4)) - 32;
}

}  // namespace

void q2_k(const float* x, const float* importance, uint8_t* out) {
    uint8_t codes[kValues];
    float scales[16], mins[16];
    uint8_t* packed = out;  // scales[16]: low nibble scale, high nibble min
    uint16_t d_bits = 0, dmin_bits = 0;
    if (importance) {
        const float sigma2 = sum_of_squares(x, kValues) / kValues;  // no factor 2 in Q2_K
        float weights[16], weight_sums[16];
        for (int j = 0; j < 16; ++j) {
            weight_sums[j] =
                importance_weights(x + 16 * j, importance + 16 * j, sigma2, 16, weights);
            scales[j] = quant_search::affine_scale(16, 3, x + 16 * j, weights, codes + 16 * j,
                                                   &mins[j], {-0.9f, 0.05f, 36, false});
        }
        uint8_t ls[16], lm[16];
        d_bits = float_to_half_bits(quant_search::positive_scale(16, 15, scales, ls, weight_sums));
        dmin_bits = float_to_half_bits(quant_search::positive_scale(16, 15, mins, lm, weight_sums));
        for (int j = 0; j < 16; ++j) packed[j] = static_cast<uint8_t>(ls[j] | (lm[j] << 4));
    } else {
        float max_scale = 0, max_min = 0, weights[16];
        for (int j = 0; j < 16; ++j) {
            for (int i = 0; i < 16; ++i) weights[i] = std::fabs(x[16 * j + i]);
            scales[j] = quant_search::affine_scale(16, 3, x + 16 * j, weights, codes + 16 * j,
                                                   &mins[j], {-0.5f, 0.1f, 15, true});
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        std::memset(packed, 0, 16);
        if (max_scale > 0) {
            const float inverse = 15.f / max_scale;
            for (int j = 0; j < 16; ++j)
                packed[j] = static_cast<uint8_t>(nearest_int(inverse * scales[j]));
            d_bits = float_to_half_bits(max_scale / 15.f);
        }
        if (max_min > 0) {
            const float inverse = 15.f / max_min;
            for (int j = 0; j < 16; ++j)
                packed[j] = static_cast<uint8_t>(
                    packed[j] | (static_cast<uint32_t>(nearest_int(inverse * mins[j])) << 4));
            dmin_bits = float_to_half_bits(max_min / 15.f);
        }
    }
    for (int j = 0; j < 16; ++j) {
        const float d = half_bits_to_float(d_bits) * static_cast<float>(packed[j] & 0xf);
        if (!d) continue;
        const float dm = half_bits_to_float(dmin_bits) * static_cast<float>(packed[j] >> 4);
        for (int i = 0; i < 16; ++i)
            codes[16 * j + i] =
                static_cast<uint8_t>(clamp_int(nearest_int((x[16 * j + i] + dm) / d), 0, 3));
    }
    pack_2bit(codes, out + 16);
    store_u16le(out + 80, d_bits);
    store_u16le(out + 82, dmin_bits);
}

void q3_k(const float* x, const float* importance, uint8_t* out) {
    int8_t codes[kValues];  // 0..7 (signed code + 4)
    float scales[16];
    uint8_t packed[12] = {};
    uint16_t d_bits = 0;
    if (importance) {
        const float sigma2 = 2 * sum_of_squares(x, kValues) / kValues;
        float weights[16], weight_sums[16];
        for (int j = 0; j < 16; ++j) {
            weight_sums[j] =
                importance_weights(x + 16 * j, importance + 16 * j, sigma2, 16, weights);
            scales[j] = quant_search::symmetric_scale(16, 4, x + 16 * j, weights, codes + 16 * j);
        }
        int8_t scale_codes[16];  // 0..63
        const float d = quant_search::symmetric_scale(16, 32, scales, weight_sums, scale_codes);
        for (int j = 0; j < 16; ++j) pack_q3_scale(j, scale_codes[j], packed);
        d_bits = float_to_half_bits(d);
    } else {
        float max_scale = 0, magnitude = 0;
        for (int j = 0; j < 16; ++j) {
            scales[j] = quant_search::symmetric_scale_refined(16, 4, x + 16 * j, codes + 16 * j);
            if (std::fabs(scales[j]) > magnitude) {
                magnitude = std::fabs(scales[j]);
                max_scale = scales[j];
            }
        }
        if (max_scale) {
            const float inverse = -32.f / max_scale;
            for (int j = 0; j < 16; ++j) {
                const int8_t l = static_cast<int8_t>(nearest_int(inverse * scales[j]));
                pack_q3_scale(j, clamp_int(l, -32, 31) + 32, packed);
            }
            d_bits = float_to_half_bits(1 / inverse);
        }
    }
    for (int j = 0; j < 16; ++j) {
        const float d = half_bits_to_float(d_bits) * static_cast<float>(unpack_q3_scale(j, packed));
        if (!d) continue;
        for (int i = 0; i < 16; ++i)
            codes[16 * j + i] =
                static_cast<int8_t>(clamp_int(nearest_int(x[16 * j + i] / d), -4, 3) + 4);
    }
    // The third bit of value j goes to bit j/32 of hmask[j%32]; the low two bits to qs.
    uint8_t low_bits[kValues];
    uint8_t* hmask = out;
    std::memset(hmask, 0, 32);
    for (int j = 0; j < kValues; ++j) {
        int code = codes[j];
        if (code > 3) {
            hmask[j % 32] = static_cast<uint8_t>(hmask[j % 32] | (1u << (j / 32)));
            code -= 4;
        }
        low_bits[j] = static_cast<uint8_t>(code);
    }
    pack_2bit(low_bits, out + 32);
    std::memcpy(out + 96, packed, 12);
    store_u16le(out + 108, d_bits);
}

namespace {

// Q4_K and Q5_K share everything but the code range, the _ref grid and Q5_K's extra cap.
void affine_k(const float* x, const float* importance, int nmax, const AffineGrid& plain_grid,
              bool cap_importance, uint8_t* codes, AffineHeader* header) {
    const AffineSubBlocks sub = affine_sub_blocks(x, importance, nmax, plain_grid, codes);
    *header = affine_header(sub, importance != nullptr, cap_importance);
    requantize_affine_k4(x, header->packed, header->d_bits, header->dmin_bits, nmax, codes);
}

void store_affine_header(const AffineHeader& header, uint8_t* out) {
    store_u16le(out, header.d_bits);
    store_u16le(out + 2, header.dmin_bits);
    std::memcpy(out + 4, header.packed, 12);
}

}  // namespace

void q4_k(const float* x, const float* importance, uint8_t* out) {
    uint8_t codes[kValues];
    AffineHeader header;
    affine_k(x, importance, 15, {-1.f, 0.1f, 20, false}, false, codes, &header);
    store_affine_header(header, out);
    uint8_t* qs = out + 16;  // per 64 values: byte l = value l | value l+32 << 4
    for (int chunk = 0; chunk < kValues; chunk += 64)
        for (int l = 0; l < 32; ++l)
            qs[chunk / 2 + l] =
                static_cast<uint8_t>(codes[chunk + l] | (codes[chunk + l + 32] << 4));
}

void q5_k(const float* x, const float* importance, uint8_t* out) {
    uint8_t codes[kValues];
    AffineHeader header;
    affine_k(x, importance, 31, {-0.5f, 0.1f, 15, false}, true, codes, &header);
    store_affine_header(header, out);
    uint8_t* qh = out + 16;  // bit 2c (value 64c+l) and 2c+1 (value 64c+32+l) of qh[l]
    uint8_t* qs = out + 48;
    std::memset(qh, 0, 32);
    for (int chunk = 0; chunk < 4; ++chunk) {
        for (int l = 0; l < 32; ++l) {
            int low = codes[64 * chunk + l];
            int high = codes[64 * chunk + l + 32];
            if (low > 15) {
                low -= 16;
                qh[l] = static_cast<uint8_t>(qh[l] | (1u << (2 * chunk)));
            }
            if (high > 15) {
                high -= 16;
                qh[l] = static_cast<uint8_t>(qh[l] | (2u << (2 * chunk)));
            }
            qs[32 * chunk + l] = static_cast<uint8_t>(low | (high << 4));
        }
    }
}

void q6_k(const float* x, const float* importance, uint8_t* out) {
    int8_t codes[kValues];  // 0..63 (signed code + 32)
    float scales[16];
    float max_scale = 0, magnitude = 0;
    for (int j = 0; j < 16; ++j) {
        // With importance the raw importance is the weight (no sqrt(sigma2 + x^2) in ggml here).
        const float* weights = importance ? importance + 16 * j : nullptr;
        scales[j] = quant_search::symmetric_scale(16, 32, x + 16 * j, weights, codes + 16 * j);
        if (std::fabs(scales[j]) > magnitude) {
            magnitude = std::fabs(scales[j]);
            max_scale = scales[j];
        }
    }
    std::memset(out, 0, 210);
    if (magnitude < 1e-15f) return;  // all zero, d included
    const float inverse = -128.f / max_scale;
    const uint16_t d_bits = float_to_half_bits(1 / inverse);
    int8_t* sub_scales = reinterpret_cast<int8_t*>(out + 192);
    for (int j = 0; j < 16; ++j) {
        const int l = nearest_int(inverse * scales[j]);
        sub_scales[j] = static_cast<int8_t>(l < 127 ? l : 127);
    }
    for (int j = 0; j < 16; ++j) {
        const float d = half_bits_to_float(d_bits) * static_cast<float>(sub_scales[j]);
        if (!d) continue;
        for (int i = 0; i < 16; ++i)
            codes[16 * j + i] =
                static_cast<int8_t>(clamp_int(nearest_int(x[16 * j + i] / d), -32, 31) + 32);
    }
    // Per 128 values: ql[l] = v[l] | v[l+64] << 4, ql[l+32] = v[l+32] | v[l+96] << 4 (low 4
    // bits); qh[l] = the high 2 bits of v[l], v[l+32], v[l+64], v[l+96].
    for (int half = 0; half < 2; ++half) {
        const int8_t* c = codes + 128 * half;
        uint8_t* ql = out + 64 * half;
        uint8_t* qh = out + 128 + 32 * half;
        for (int l = 0; l < 32; ++l) {
            ql[l] = static_cast<uint8_t>((c[l] & 0xf) | ((c[l + 64] & 0xf) << 4));
            ql[l + 32] = static_cast<uint8_t>((c[l + 32] & 0xf) | ((c[l + 96] & 0xf) << 4));
            qh[l] = static_cast<uint8_t>((c[l] >> 4) | ((c[l + 32] >> 4) << 2) |
                                         ((c[l + 64] >> 4) << 4) | ((c[l + 96] >> 4) << 6));
        }
    }
    store_u16le(out + 208, d_bits);
}

}  // namespace rebox::verify_ref::quant_blocks
