// The lossy-type block dequantizers (ref_dequant_lossy.hpp). Layouts, in file order
// (ggml-common.h): Q2_K scales[16] qs[64] d dmin; Q3_K hmask[32] qs[64] scales[12] d; Q4_K d dmin
// scales[12] qs[128]; Q5_K d dmin scales[12] qh[32] qs[128]; Q6_K ql[128] qh[64] scales[16] d;
// IQ4_NL d qs[16]; IQ4_XS d scales_h scales_l[4] qs[128]; MXFP4 e qs[16]; TQ1_0 qs[48] qh[4] d;
// TQ2_0 qs[64] d; Q1_0 d qs[16]; Q2_0 d qs[16]; IQ2_XXS d qs[64]; IQ2_XS d qs[64] scales[8];
// IQ2_S d qs[32] signs[32] qh[8] scales[8]; IQ3_XXS d qs[64] scales_and_signs[32]; IQ3_S d qs[64]
// qh[8] signs[32] scales[4]; IQ1_S d qs[32] qh[16]; IQ1_M qs[32] qh[16] scales[8]. The i-quant
// grid points are read from quantize/iq_grid_data.hpp (shared read-only data, no code).
#include "verify/quantized/ref_dequant_lossy.hpp"

#include <cmath>
#include <cstring>
#include <span>

#include "quantize/iq_grid_data.hpp"
#include "verify/values/ref_dequant.hpp"
#include "verify/values/ref_fp4.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {

namespace {

constexpr int8_t kIq4Grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                 1,    13,   25,  38,  53,  69,  89,  113};
constexpr int8_t kFp4Grid[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

float half_at(const uint8_t* bytes) { return half_bits_to_float(load_u16le(bytes)); }

// Q4_K / Q5_K sub-block j's 6-bit scale and min.
void scale_min_k4(const uint8_t* packed, int j, int* scale, int* min) {
    if (j < 4) {
        *scale = packed[j] & 63;
        *min = packed[j + 4] & 63;
    } else {
        *scale = (packed[j + 4] & 0xf) | ((packed[j - 4] >> 6) << 4);
        *min = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
    }
}

void q2_k(const uint8_t* block, float* y) {
    const uint8_t* scales = block;
    const uint8_t* qs = block + 16;
    const float d = half_at(block + 80), dmin = half_at(block + 82);
    for (int v = 0; v < 256; ++v) {
        const int half = v / 128, within = v % 128;
        const int shift = 2 * (within / 32), l = within % 32;  // 32 values per shift
        const uint8_t sc = scales[8 * half + 2 * (within / 32) + l / 16];
        const float dl = d * static_cast<float>(sc & 0xf);
        const float ml = dmin * static_cast<float>(sc >> 4);
        const int code = (qs[32 * half + l] >> shift) & 3;
        y[v] = dl * static_cast<float>(code) - ml;
    }
}

void q3_k(const uint8_t* block, float* y) {
    const uint8_t* hmask = block;
    const uint8_t* qs = block + 32;
    const uint8_t* packed = block + 96;
    const float d = half_at(block + 108);
    for (int v = 0; v < 256; ++v) {
        const int half = v / 128, within = v % 128;
        const int group = within / 32, l = within % 32;
        const int j = 8 * half + 2 * group + l / 16;  // sub-block of 16
        const int low = j < 8 ? packed[j] & 0xf : packed[j - 8] >> 4;
        const int scale = (low | (((packed[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
        const float dl = d * static_cast<float>(scale);
        const int code = (qs[32 * half + l] >> (2 * group)) & 3;
        const bool high = hmask[l] & (1u << (4 * half + group));
        y[v] = dl * static_cast<float>(code - (high ? 0 : 4));
    }
}

void affine_k(const uint8_t* block, bool five_bits, float* y) {
    const float d = half_at(block), dmin = half_at(block + 2);
    const uint8_t* packed = block + 4;
    const uint8_t* qh = block + 16;
    const uint8_t* qs = block + (five_bits ? 48 : 16);
    for (int v = 0; v < 256; ++v) {
        const int chunk = v / 64, upper = (v % 64) / 32, l = v % 32;
        int scale = 0, min = 0;
        scale_min_k4(packed, 2 * chunk + upper, &scale, &min);
        const float dl = d * static_cast<float>(scale);
        const float ml = dmin * static_cast<float>(min);
        const uint8_t byte = qs[32 * chunk + l];
        int code = upper ? byte >> 4 : byte & 0xf;
        if (five_bits && (qh[l] & (1u << (2 * chunk + upper)))) code += 16;
        y[v] = dl * static_cast<float>(code) - ml;
    }
}

void q6_k(const uint8_t* block, float* y) {
    const uint8_t* ql = block;
    const uint8_t* qh = block + 128;
    const int8_t* scales = reinterpret_cast<const int8_t*>(block + 192);
    const float d = half_at(block + 208);
    for (int v = 0; v < 256; ++v) {
        const int half = v / 128, within = v % 128;
        const int quarter = within / 32, l = within % 32;  // quarters 0..3: v[l], v[l+32], ...
        const uint8_t low_byte = ql[64 * half + l + 32 * (quarter % 2)];
        const int low = quarter < 2 ? low_byte & 0xf : low_byte >> 4;
        const int high = (qh[32 * half + l] >> (2 * quarter)) & 3;
        const int code = (low | (high << 4)) - 32;
        const float scale = static_cast<float>(scales[8 * half + 2 * quarter + l / 16]);
        y[v] = d * scale * static_cast<float>(code);
    }
}

void iq4_nl(const uint8_t* block, float* y) {
    const float d = half_at(block);
    for (int j = 0; j < 16; ++j) {
        y[j] = d * static_cast<float>(kIq4Grid[block[2 + j] & 0xf]);
        y[j + 16] = d * static_cast<float>(kIq4Grid[block[2 + j] >> 4]);
    }
}

void iq4_xs(const uint8_t* block, float* y) {
    const float d = half_at(block);
    const uint16_t scales_high = load_u16le(block + 2);
    for (int b = 0; b < 8; ++b) {
        const int low = (block[4 + b / 2] >> (4 * (b % 2))) & 0xf;
        const int scale = (low | (((scales_high >> (2 * b)) & 3) << 4)) - 32;
        const float dl = d * static_cast<float>(scale);
        const uint8_t* qs = block + 8 + 16 * b;
        for (int j = 0; j < 16; ++j) {
            y[32 * b + j] = dl * static_cast<float>(kIq4Grid[qs[j] & 0xf]);
            y[32 * b + j + 16] = dl * static_cast<float>(kIq4Grid[qs[j] >> 4]);
        }
    }
}

void mxfp4(const uint8_t* block, float* y) {
    const uint8_t e = block[0];
    const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
    float unit;
    std::memcpy(&unit, &bits, sizeof unit);
    for (int j = 0; j < 16; ++j) {
        y[j] = static_cast<float>(kFp4Grid[block[1 + j] & 0xf]) * unit;
        y[j + 16] = static_cast<float>(kFp4Grid[block[1 + j] >> 4]) * unit;
    }
}

// Value v of a 256-value TQ1_0 block: its byte and base-3 digit (ref_quantize_ternary.cpp's
// layout), decoded as ggml does: (uint8_t)(byte * 3^digit) * 3 >> 8 is the top digit left.
void tq1_0(const uint8_t* block, float* y) {
    static constexpr uint32_t kPow3[5] = {1, 3, 9, 27, 81};
    const float d = half_at(block + 52);
    for (int v = 0; v < 256; ++v) {
        int byte = 0, digit = 0;
        if (v < 160) {
            byte = v % 32, digit = v / 32;
        } else if (v < 240) {
            byte = 32 + (v - 160) % 16, digit = (v - 160) / 16;
        } else {
            byte = 48 + (v - 240) % 4, digit = (v - 240) / 4;
        }
        const uint32_t shifted = (block[byte] * kPow3[digit]) & 0xffu;
        y[v] = static_cast<float>(static_cast<int>((shifted * 3) >> 8) - 1) * d;
    }
}

void tq2_0(const uint8_t* block, float* y) {
    const float d = half_at(block + 64);
    for (int v = 0; v < 256; ++v) {
        const int within = v % 128;
        const int code = (block[32 * (v / 128) + within % 32] >> (2 * (within / 32))) & 3;
        y[v] = static_cast<float>(code - 1) * d;
    }
}

void q1_0(const uint8_t* block, float* y) {
    // ggml's fp16 -> fp32 conversion quiets a signalling NaN (its multiply by 2^-112); no other
    // operation touches Q1_0's d, so the quiet bit is set here.
    float d = half_at(block);
    if (std::isnan(d)) d = float_from_bits(float_bits(d) | 0x00400000u);
    for (int v = 0; v < 128; ++v) y[v] = ((block[2 + v / 8] >> (v % 8)) & 1) != 0 ? d : -d;
}

void q2_0(const uint8_t* block, float* y) {
    const float d = half_at(block);
    for (int v = 0; v < 64; ++v)
        y[v] = static_cast<float>(((block[2 + v / 4] >> (2 * (v % 4))) & 3) - 1) * d;
}

// ---- The lattice i-quants. A compact grid entry holds a point's codes l (2 bits each for the
// 2-bit and 1-bit grids, 3 bits for the 3-bit ones); ggml-common.h's grids decode them as
// magnitudes {8, 25, 43}[l] (IQ2), {4, 12, 20, 28, 36, 44, 52, 62}[l] (IQ3_XXS), 2l + 1 (IQ3_S)
// and l - 1 (IQ1, shifted by +-0.125). IQ2_XXS / IQ2_XS / IQ3_XXS store 7 sign bits per 8 values
// and an eighth that makes their count even (ksigns_iq2xs); bit j negates value j.
constexpr float kIq2Magnitude[4] = {8, 25, 43, 0};
constexpr float kIq3XxsMagnitude[8] = {4, 12, 20, 28, 36, 44, 52, 62};

int grid_code(uint16_t entry, int bits, int i) { return (entry >> (bits * i)) & ((1 << bits) - 1); }

uint32_t even_sign_bits(uint32_t seven) {
    uint32_t parity = 0;
    for (int i = 0; i < 7; ++i) parity ^= (seven >> i) & 1;
    return seven | (parity << 7);
}

float signed_value(float magnitude_times_scale, uint32_t signs, int j) {
    return magnitude_times_scale * ((signs >> j) & 1 ? -1.f : 1.f);
}

// Eight values of a 2-bit grid point at scale db.
void iq2_group(uint16_t entry, uint32_t signs, float db, float* y) {
    for (int j = 0; j < 8; ++j)
        y[j] = signed_value(db * kIq2Magnitude[grid_code(entry, 2, j)], signs, j);
}

void iq2_xxs(const uint8_t* block, float* y) {
    const float d = half_at(block);
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t* words = block + 2 + 8 * ib;
        const uint32_t aux = load_u32le(words + 4);
        const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.25f;
        for (int l = 0; l < 4; ++l)
            iq2_group(iq_grid_data::kIq2GridXxs[words[l]], even_sign_bits((aux >> (7 * l)) & 127),
                      db, y + 32 * ib + 8 * l);
    }
}

void iq2_xs(const uint8_t* block, float* y) {
    const float d = half_at(block);
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t scales = block[66 + ib];
        const float db[2] = {d * (0.5f + static_cast<float>(scales & 0xf)) * 0.25f,
                             d * (0.5f + static_cast<float>(scales >> 4)) * 0.25f};
        for (int l = 0; l < 4; ++l) {
            const uint16_t word = load_u16le(block + 2 + 2 * (4 * ib + l));
            iq2_group(iq_grid_data::kIq2GridXs[word & 511], even_sign_bits(word >> 9), db[l / 2],
                      y + 32 * ib + 8 * l);
        }
    }
}

void iq2_s(const uint8_t* block, float* y) {
    const float d = half_at(block);
    const uint8_t* qs = block + 2;
    const uint8_t* signs = block + 34;
    const uint8_t* qh = block + 66;
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t scales = block[74 + ib];
        const float db[2] = {d * (0.5f + static_cast<float>(scales & 0xf)) * 0.25f,
                             d * (0.5f + static_cast<float>(scales >> 4)) * 0.25f};
        for (int l = 0; l < 4; ++l) {
            const int index = qs[4 * ib + l] | (((qh[ib] >> (2 * l)) & 3) << 8);
            iq2_group(iq_grid_data::kIq2GridS[index], signs[4 * ib + l], db[l / 2],
                      y + 32 * ib + 8 * l);
        }
    }
}

void iq3_xxs(const uint8_t* block, float* y) {
    const float d = half_at(block);
    for (int ib = 0; ib < 8; ++ib) {
        const uint32_t aux = load_u32le(block + 66 + 4 * ib);
        const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
        for (int l = 0; l < 4; ++l) {
            const uint32_t signs = even_sign_bits((aux >> (7 * l)) & 127);
            for (int half = 0; half < 2; ++half) {
                const uint16_t entry = iq_grid_data::kIq3GridXxs[block[2 + 8 * ib + 2 * l + half]];
                for (int j = 0; j < 4; ++j)
                    y[32 * ib + 8 * l + 4 * half + j] = signed_value(
                        db * kIq3XxsMagnitude[grid_code(entry, 3, j)], signs, 4 * half + j);
            }
        }
    }
}

void iq3_s(const uint8_t* block, float* y) {
    const float d = half_at(block);
    const uint8_t* qs = block + 2;
    const uint8_t* qh = block + 66;
    const uint8_t* signs = block + 74;
    for (int ib = 0; ib < 8; ++ib) {
        const int code = (block[106 + ib / 2] >> (4 * (ib % 2))) & 0xf;
        const float db = d * static_cast<float>(1 + 2 * code);
        for (int group = 0; group < 8; ++group) {
            const int index = qs[8 * ib + group] | (((qh[ib] >> group) & 1) << 8);
            const uint16_t entry = iq_grid_data::kIq3GridS[index];
            const uint8_t sign_byte = signs[4 * ib + group / 2];
            for (int j = 0; j < 4; ++j)
                y[32 * ib + 4 * group + j] =
                    signed_value(db * static_cast<float>(2 * grid_code(entry, 3, j) + 1), sign_byte,
                                 4 * (group % 2) + j);
        }
    }
}

// Eight IQ1 values: dl * (l - 1 + delta).
void iq1_group(uint16_t entry, float dl, float delta, float* y) {
    for (int j = 0; j < 8; ++j)
        y[j] = dl * (static_cast<float>(grid_code(entry, 2, j) - 1) + delta);
}

void iq1_s(const uint8_t* block, float* y) {
    const float d = half_at(block);
    for (int ib = 0; ib < 8; ++ib) {
        const uint16_t high = load_u16le(block + 34 + 2 * ib);
        const float dl = d * static_cast<float>(2 * ((high >> 12) & 7) + 1);
        const float delta = high & 0x8000 ? -0.125f : 0.125f;
        for (int l = 0; l < 4; ++l) {
            const int index = block[2 + 4 * ib + l] | (((high >> (3 * l)) & 7) << 8);
            iq1_group(iq_grid_data::kIq1Grid[index], dl, delta, y + 32 * ib + 8 * l);
        }
    }
}

void iq1_m(const uint8_t* block, float* y) {
    uint16_t sc[4];
    for (int i = 0; i < 4; ++i) sc[i] = load_u16le(block + 48 + 2 * i);
    const auto half_bits = static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                                 ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    const float d = half_bits_to_float(half_bits);
    const uint8_t* qs = block;
    const uint8_t* qh = block + 32;
    for (int ib = 0; ib < 8; ++ib) {
        const float dl[2] = {
            d * static_cast<float>(2 * ((sc[ib / 2] >> (6 * (ib % 2))) & 7) + 1),
            d * static_cast<float>(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1)};
        for (int l = 0; l < 4; ++l) {
            const uint8_t h = qh[2 * ib + l / 2];
            const int nibble = (h >> (4 * (l % 2))) & 0xf;  // 3 index bits, then the shift bit
            const int index = qs[4 * ib + l] | ((nibble & 7) << 8);
            const float delta = nibble & 8 ? -0.125f : 0.125f;
            iq1_group(iq_grid_data::kIq1Grid[index], dl[l / 2], delta, y + 32 * ib + 8 * l);
        }
    }
}

}  // namespace

bool dequantize_lossy_block(uint32_t ggml_type_id, const uint8_t* block, float* out) {
    const auto legacy = [&](auto decode, size_t bytes) {
        decode(std::span<const uint8_t>(block, bytes), std::span<float>(out, 32));
        return true;
    };
    switch (ggml_type_id) {
        case 2:
            return legacy(dequantize_q4_0, 18);
        case 3:
            return legacy(dequantize_q4_1, 20);
        case 6:
            return legacy(dequantize_q5_0, 22);
        case 7:
            return legacy(dequantize_q5_1, 24);
        case 8:
            return legacy(dequantize_q8_0, 34);
        case 10:
            q2_k(block, out);
            return true;
        case 11:
            q3_k(block, out);
            return true;
        case 12:
            affine_k(block, false, out);
            return true;
        case 13:
            affine_k(block, true, out);
            return true;
        case 14:
            q6_k(block, out);
            return true;
        case 20:
            iq4_nl(block, out);
            return true;
        case 23:
            iq4_xs(block, out);
            return true;
        case 39:
            mxfp4(block, out);
            return true;
        case 40:
            dequantize_nvfp4(std::span<const uint8_t>(block, 36), std::span<float>(out, 64));
            return true;
        case 34:
            tq1_0(block, out);
            return true;
        case 35:
            tq2_0(block, out);
            return true;
        case 41:
            q1_0(block, out);
            return true;
        case 42:
            q2_0(block, out);
            return true;
        case 16:
            iq2_xxs(block, out);
            return true;
        case 17:
            iq2_xs(block, out);
            return true;
        case 22:
            iq2_s(block, out);
            return true;
        case 18:
            iq3_xxs(block, out);
            return true;
        case 21:
            iq3_s(block, out);
            return true;
        case 19:
            iq1_s(block, out);
            return true;
        case 29:
            iq1_m(block, out);
            return true;
        default:
            return false;
    }
}

}  // namespace rebox::verify_ref
