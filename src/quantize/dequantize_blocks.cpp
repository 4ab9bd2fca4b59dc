// dequantize_row for every type rebox quantizes plus NVFP4 and F32/F16/BF16: the same float
// expressions, in the same order, as ggml's dequantize_row_<type>, so the floats are the same bits.
#include <bit>
#include <cmath>
#include <cstring>

#include "quantize/ggml_scalar.hpp"
#include "quantize/iq_grid_data.hpp"
#include "quantize/k_block_layout.hpp"
#include "quantize/quantize.hpp"

namespace rebox::quant {

namespace {

constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};
constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// code*d + m with ggml's NaN result: x86 returns the first operand's NaN when both are NaN, and
// ggml's compiled code adds m to the product; the compiler may swap a commutative add, so the
// product's NaN is returned explicitly.
float scaled_plus_min(int code, float d, float m) {
    const float product = static_cast<float>(code) * d;
    return std::isnan(product) ? product : product + m;
}

void q4_0(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 18, y += 32) {
        const float d = load_fp16(x);
        for (int j = 0; j < 16; ++j) {
            y[j] = static_cast<float>((x[2 + j] & 0x0f) - 8) * d;
            y[j + 16] = static_cast<float>((x[2 + j] >> 4) - 8) * d;
        }
    }
}

void q4_1(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 20, y += 32) {
        const float d = load_fp16(x);
        const float m = load_fp16(x + 2);
        for (int j = 0; j < 16; ++j) {
            y[j] = scaled_plus_min(x[4 + j] & 0x0f, d, m);
            y[j + 16] = scaled_plus_min(x[4 + j] >> 4, d, m);
        }
    }
}

// Q5_0 (has_min false, 22 bytes) and Q5_1 (has_min true, 24 bytes).
void q5(const uint8_t* x, float* y, int64_t nb, bool has_min) {
    const int bytes = has_min ? 24 : 22;
    const int qh_at = has_min ? 4 : 2;
    for (int64_t i = 0; i < nb; ++i, x += bytes, y += 32) {
        const float d = load_fp16(x);
        const float m = has_min ? load_fp16(x + 2) : 0.f;
        const uint32_t qh = load_u32(x + qh_at);
        const uint8_t* qs = x + qh_at + 4;
        for (int j = 0; j < 16; ++j) {
            const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10);
            const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
            const int c0 = (qs[j] & 0x0f) | h0;
            const int c1 = (qs[j] >> 4) | h1;
            if (has_min) {
                y[j] = scaled_plus_min(c0, d, m);
                y[j + 16] = scaled_plus_min(c1, d, m);
            } else {
                y[j] = static_cast<float>(c0 - 16) * d;
                y[j + 16] = static_cast<float>(c1 - 16) * d;
            }
        }
    }
}

void q8_0(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 34, y += 32) {
        const float d = load_fp16(x);
        for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<int8_t>(x[2 + j])) * d;
    }
}

void q2_k(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 84) {
        const float d = load_fp16(x + 80);
        const float min = load_fp16(x + 82);
        const uint8_t* q = x + 16;
        int is = 0;
        for (int n = 0; n < 256; n += 128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; ++half) {
                    const uint8_t sc = x[is++];
                    const float dl = d * static_cast<float>(sc & 0xf);
                    const float ml = min * static_cast<float>(sc >> 4);
                    for (int l = 0; l < 16; ++l) {
                        *y++ = dl * static_cast<float>((q[l + 16 * half] >> shift) & 3) - ml;
                    }
                }
            }
        }
    }
}

void q3_k(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 110) {
        const float d_all = load_fp16(x + 108);
        const uint8_t* hm = x;
        const uint8_t* q = x + 32;
        int is = 0;
        uint8_t m = 1;
        for (int n = 0; n < 256; n += 128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
                for (int half = 0; half < 2; ++half) {
                    const float dl = d_all * static_cast<float>(unpack_q3_k_scale(is++, x + 96));
                    for (int l = 0; l < 16; ++l) {
                        const int k = l + 16 * half;
                        const int code = ((q[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4);
                        *y++ = dl * static_cast<float>(code);
                    }
                }
            }
        }
    }
}

// Q4_K (five_bit false, 144 bytes) and Q5_K (five_bit true, 176 bytes).
void q4_q5_k(const uint8_t* x, float* y, int64_t nb, bool five_bit) {
    const int bytes = five_bit ? 176 : 144;
    for (int64_t i = 0; i < nb; ++i, x += bytes) {
        const float d = load_fp16(x);
        const float min = load_fp16(x + 2);
        const uint8_t* scales = x + 4;
        const uint8_t* qh = x + 16;
        const uint8_t* ql = x + (five_bit ? 48 : 16);
        uint8_t u1 = 1, u2 = 2;
        for (int is = 0; is < 8; is += 2, ql += 32) {
            uint8_t sc, m;
            unpack_scale_min_k4(is, scales, &sc, &m);
            const float d1 = d * static_cast<float>(sc);
            const float m1 = min * static_cast<float>(m);
            unpack_scale_min_k4(is + 1, scales, &sc, &m);
            const float d2 = d * static_cast<float>(sc);
            const float m2 = min * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) {
                const int high = five_bit && (qh[l] & u1) ? 16 : 0;
                *y++ = d1 * static_cast<float>((ql[l] & 0xf) + high) - m1;
            }
            for (int l = 0; l < 32; ++l) {
                const int high = five_bit && (qh[l] & u2) ? 16 : 0;
                *y++ = d2 * static_cast<float>((ql[l] >> 4) + high) - m2;
            }
            u1 = static_cast<uint8_t>(u1 << 2);
            u2 = static_cast<uint8_t>(u2 << 2);
        }
    }
}

void q6_k(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 210) {
        const float d = load_fp16(x + 208);
        const uint8_t* ql = x;
        const uint8_t* qh = x + 128;
        const auto* sc = reinterpret_cast<const int8_t*>(x + 192);
        for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
                y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
                y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
                y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
            }
        }
    }
}

void iq4_nl(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 18, y += 32) {
        const float d = load_fp16(x);
        for (int j = 0; j < 16; ++j) {
            y[j] = d * static_cast<float>(kIq4nlValues[x[2 + j] & 0xf]);
            y[j + 16] = d * static_cast<float>(kIq4nlValues[x[2 + j] >> 4]);
        }
    }
}

void iq4_xs(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 136) {
        const float d = load_fp16(x);
        const uint16_t scales_h = load_u16(x + 2);
        const uint8_t* scales_l = x + 4;
        const uint8_t* qs = x + 8;
        for (int ib = 0; ib < 8; ++ib, y += 32, qs += 16) {
            const int ls =
                ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | (((scales_h >> (2 * ib)) & 3) << 4);
            const float dl = d * static_cast<float>(ls - 32);
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * static_cast<float>(kIq4nlValues[qs[j] & 0xf]);
                y[j + 16] = dl * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
            }
        }
    }
}

void mxfp4(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 17, y += 32) {
        const float d = e8m0_to_fp32_half(x[0]);
        for (int j = 0; j < 16; ++j) {
            y[j] = static_cast<float>(kMxfp4Values[x[1 + j] & 0x0f]) * d;
            y[j + 16] = static_cast<float>(kMxfp4Values[x[1 + j] >> 4]) * d;
        }
    }
}

// Q1_0: d, then one bit per value (bit j % 8 of byte j / 8): +d when set, -d when clear.
void q1_0(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 18, y += 128) {
        const float d = load_fp16(x);
        for (int j = 0; j < 128; ++j) y[j] = (x[2 + j / 8] >> (j % 8)) & 1 ? d : -d;
    }
}

// Q2_0: d, then 2-bit codes four per byte from the low bits: (code - 1) * d.
void q2_0(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 18, y += 64) {
        const float d = load_fp16(x);
        for (int j = 0; j < 64; ++j)
            y[j] = static_cast<float>(((x[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
    }
}

// TQ1_0's base-3 digit n of a packed byte: (uint8_t)(byte * 3^n) * 3 >> 8, minus 1.
float trit(uint8_t packed, int n, float d) {
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    const auto q = static_cast<uint8_t>(packed * kPow3[n]);
    return static_cast<float>(((static_cast<uint16_t>(q) * 3) >> 8) - 1) * d;
}

// block_tq1_0: qs[48], qh[4], d. Values: digit n of qs[m] for the 32-byte and then the 16-byte
// group (digit-major), then digit n of qh[j] (4 digits).
void tq1_0(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 54) {
        const float d = load_fp16(x + 52);
        for (int n = 0; n < 5; ++n)
            for (int m = 0; m < 32; ++m) *y++ = trit(x[m], n, d);
        for (int n = 0; n < 5; ++n)
            for (int m = 0; m < 16; ++m) *y++ = trit(x[32 + m], n, d);
        for (int n = 0; n < 4; ++n)
            for (int j = 0; j < 4; ++j) *y++ = trit(x[48 + j], n, d);
    }
}

// block_tq2_0: qs[64], d. Bits 2l of byte j + m are value 128 (j / 32) + 32 l + m.
void tq2_0(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 66) {
        const float d = load_fp16(x + 64);
        for (int j = 0; j < 64; j += 32)
            for (int l = 0; l < 4; ++l)
                for (int m = 0; m < 32; ++m)
                    *y++ = static_cast<float>(((x[j + m] >> (2 * l)) & 3) - 1) * d;
    }
}

// block_nvfp4: d[4] (one UE4M3 scale per 16 values), qs[32]; in sub-block s, byte qs[8s + j] holds
// value j (low nibble) and value j + 8 (high nibble).
void nvfp4(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 36) {
        for (int s = 0; s < 4; ++s, y += 16) {
            const float d = ue4m3_to_fp32_half(x[s]);
            const uint8_t* qs = x + 4 + 8 * s;
            for (int j = 0; j < 8; ++j) {
                y[j] = static_cast<float>(kMxfp4Values[qs[j] & 0x0f]) * d;
                y[j + 8] = static_cast<float>(kMxfp4Values[qs[j] >> 4]) * d;
            }
        }
    }
}

// The 2-bit i-quants: a grid point's 8 codes l (2 bits each in the compact grid) are the
// magnitudes {8, 25, 43}[l]; 7 stored sign bits get an eighth that makes their count even
// (ggml's ksigns_iq2xs), and a set bit j negates value j (kmask_iq2xs).
constexpr float kIq2Magnitudes[3] = {8.f, 25.f, 43.f};

unsigned even_signs(unsigned signs7) {
    return signs7 | (static_cast<unsigned>(std::popcount(signs7) & 1) << 7);
}

void iq2_group(uint16_t point, unsigned signs, float db, float* y) {
    for (int j = 0; j < 8; ++j)
        y[j] = db * kIq2Magnitudes[(point >> (2 * j)) & 3] * ((signs >> j) & 1 ? -1.f : 1.f);
}

// block_iq2_xxs: d, then per 32 values two uint32: four grid indices (bytes), and four 7-bit
// sign groups with the 4-bit scale in bits 28..31.
void iq2_xxs(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 66) {
        const float d = load_fp16(x);
        for (int ib32 = 0; ib32 < 8; ++ib32) {
            const uint8_t* q = x + 2 + 8 * ib32;
            const uint32_t aux1 = load_u32(q + 4);
            const float db = d * (0.5f + static_cast<float>(aux1 >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l, y += 8)
                iq2_group(iq_grid_data::kIq2GridXxs[q[l]], even_signs((aux1 >> (7 * l)) & 127), db,
                          y);
        }
    }
}

// block_iq2_xs: d, qs[32] (uint16: grid index in bits 0..8, signs in 9..15), scales[8] (two
// 4-bit scales per 32 values, one per 16).
void iq2_xs(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 74) {
        const float d = load_fp16(x);
        for (int ib32 = 0; ib32 < 8; ++ib32) {
            const uint8_t sc = x[66 + ib32];
            const float db[2] = {d * (0.5f + static_cast<float>(sc & 0xf)) * 0.25f,
                                 d * (0.5f + static_cast<float>(sc >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint16_t q = load_u16(x + 2 + 2 * (4 * ib32 + l));
                iq2_group(iq_grid_data::kIq2GridXs[q & 511], even_signs(q >> 9u), db[l / 2], y);
            }
        }
    }
}

// block_iq2_s: d, qs[32] (low 8 bits of the grid indices), signs[32] (8 bits per 8 values),
// qh[8] (bits 8..9 of the indices, four per byte), scales[8] (4 bits per 16 values).
void iq2_s(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 82) {
        const float d = load_fp16(x);
        for (int ib32 = 0; ib32 < 8; ++ib32) {
            const uint8_t sc = x[74 + ib32];
            const float db[2] = {d * (0.5f + static_cast<float>(sc & 0xf)) * 0.25f,
                                 d * (0.5f + static_cast<float>(sc >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, y += 8) {
                const int slot = 4 * ib32 + l;
                const int index = x[2 + slot] | (((x[66 + ib32] >> (2 * l)) & 3) << 8);
                iq2_group(iq_grid_data::kIq2GridS[index], x[34 + slot], db[l / 2], y);
            }
        }
    }
}

// block_iq3_xxs: d, qs[64] (grid indices, 4 values each), then per 32 values a uint32 of four
// 7-bit sign groups and the 4-bit scale in bits 28..31. A code l of the grid is the magnitude
// {4, 12, 20, 28, 36, 44, 52, 62}[l] (8l + 4 but for the last).
constexpr float kIq3XxsMagnitudes[8] = {4.f, 12.f, 20.f, 28.f, 36.f, 44.f, 52.f, 62.f};

void iq3_xxs(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 98) {
        const float d = load_fp16(x);
        const uint8_t* qs = x + 2;
        for (int ib32 = 0; ib32 < 8; ++ib32, qs += 8) {
            const uint32_t aux = load_u32(x + 66 + 4 * ib32);
            const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l, y += 8) {
                const unsigned s7 = (aux >> (7 * l)) & 127;
                const unsigned signs = s7 | (static_cast<unsigned>(std::popcount(s7) & 1) << 7);
                for (int half = 0; half < 2; ++half) {
                    const uint16_t point = iq_grid_data::kIq3GridXxs[qs[2 * l + half]];
                    for (int j = 0; j < 4; ++j) {
                        const float value = kIq3XxsMagnitudes[(point >> (3 * j)) & 7];
                        y[4 * half + j] = db * value * ((signs >> (4 * half + j)) & 1 ? -1.f : 1.f);
                    }
                }
            }
        }
    }
}

// block_iq3_s: d, qs[64] (low 8 bits of the grid indices), qh[8] (their 9th bits), signs[32]
// (one bit per value), scales[4] (two 4-bit scales per 64 values). A code l is 2l + 1.
void iq3_s(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 110) {
        const float d = load_fp16(x);
        for (int ib32 = 0; ib32 < 8; ++ib32) {
            const uint8_t sc = x[106 + ib32 / 2];
            const float db = d * static_cast<float>(1 + 2 * (ib32 % 2 ? sc >> 4 : sc & 0xf));
            for (int l = 0; l < 8; ++l, y += 4) {
                const int slot = 8 * ib32 + l;
                const int index = x[2 + slot] | (((x[66 + slot / 8] >> (slot % 8)) & 1) << 8);
                const uint16_t point = iq_grid_data::kIq3GridS[index];
                const uint8_t signs = x[74 + 4 * ib32 + l / 2];
                for (int j = 0; j < 4; ++j) {
                    const auto value = static_cast<float>(2 * ((point >> (3 * j)) & 7) + 1);
                    y[j] = db * value * ((signs >> (4 * (l % 2) + j)) & 1 ? -1.f : 1.f);
                }
            }
        }
    }
}

// The 1-bit grid: a code l (2 bits each in the compact grid) is l - 1, shifted by +-0.125.
float iq1_value(uint16_t point, int j, float dl, float delta) {
    return dl * (static_cast<float>(((point >> (2 * j)) & 3) - 1) + delta);
}

// block_iq1_s: d, qs[32] (low 8 bits of the grid indices), qh[8] (uint16: 3 high bits per
// index, the 3-bit scale in bits 12..14, the shift's sign in bit 15).
void iq1_s(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 50) {
        const float d = load_fp16(x);
        for (int ib = 0; ib < 8; ++ib) {
            const uint16_t qh = load_u16(x + 34 + 2 * ib);
            const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -0.125f : 0.125f;
            for (int l = 0; l < 4; ++l, y += 8) {
                const int index = x[2 + 4 * ib + l] | (((qh >> (3 * l)) & 7) << 8);
                for (int j = 0; j < 8; ++j)
                    y[j] = iq1_value(iq_grid_data::kIq1Grid[index], j, dl, delta);
            }
        }
    }
}

// block_iq1_m: qs[32], qh[16] (per byte two groups: 3 high index bits and a shift sign bit
// each), scales[8] (four uint16: 3-bit scales, the fp16 scale in their top nibbles).
void iq1_m(const uint8_t* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 56) {
        uint16_t sc[4];
        for (int k = 0; k < 4; ++k) sc[k] = load_u16(x + 48 + 2 * k);
        const auto scale = static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                                 ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const float d = fp16_to_fp32(scale);
        for (int ib = 0; ib < 8; ++ib) {
            const float dl[2] = {
                d * static_cast<float>(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 7) + 1),
                d * static_cast<float>(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1)};
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint8_t qh = x[32 + 2 * ib + l / 2];
                const int shift = l % 2 ? 4 : 0;
                const int index = x[4 * ib + l] | (((qh >> shift) & 7) << 8);
                const float delta = (qh >> shift) & 8 ? -0.125f : 0.125f;
                for (int j = 0; j < 8; ++j)
                    y[j] = iq1_value(iq_grid_data::kIq1Grid[index], j, dl[l / 2], delta);
            }
        }
    }
}

}  // namespace

void dequantize_row_scalar(GgmlType type, const void* src, float* dst, int64_t n) {
    const auto* x = static_cast<const uint8_t*>(src);
    switch (type) {
        case GgmlType::F32:
            std::memcpy(dst, src, static_cast<size_t>(n) * 4);
            return;
        case GgmlType::F16:
            for (int64_t i = 0; i < n; ++i) dst[i] = load_fp16(x + 2 * i);
            return;
        case GgmlType::BF16:
            for (int64_t i = 0; i < n; ++i) {
                dst[i] = std::bit_cast<float>(static_cast<uint32_t>(load_u16(x + 2 * i)) << 16);
            }
            return;
        case GgmlType::Q4_0:
            q4_0(x, dst, n / 32);
            return;
        case GgmlType::Q4_1:
            q4_1(x, dst, n / 32);
            return;
        case GgmlType::Q5_0:
            q5(x, dst, n / 32, false);
            return;
        case GgmlType::Q5_1:
            q5(x, dst, n / 32, true);
            return;
        case GgmlType::Q8_0:
            q8_0(x, dst, n / 32);
            return;
        case GgmlType::Q2_K:
            q2_k(x, dst, n / 256);
            return;
        case GgmlType::Q3_K:
            q3_k(x, dst, n / 256);
            return;
        case GgmlType::Q4_K:
            q4_q5_k(x, dst, n / 256, false);
            return;
        case GgmlType::Q5_K:
            q4_q5_k(x, dst, n / 256, true);
            return;
        case GgmlType::Q6_K:
            q6_k(x, dst, n / 256);
            return;
        case GgmlType::IQ4_NL:
            iq4_nl(x, dst, n / 32);
            return;
        case GgmlType::IQ4_XS:
            iq4_xs(x, dst, n / 256);
            return;
        case GgmlType::MXFP4:
            mxfp4(x, dst, n / 32);
            return;
        case GgmlType::NVFP4:
            nvfp4(x, dst, n / 64);
            return;
        case GgmlType::Q1_0:
            q1_0(x, dst, n / 128);
            return;
        case GgmlType::Q2_0:
            q2_0(x, dst, n / 64);
            return;
        case GgmlType::TQ1_0:
            tq1_0(x, dst, n / 256);
            return;
        case GgmlType::TQ2_0:
            tq2_0(x, dst, n / 256);
            return;
        case GgmlType::IQ2_XXS:
            iq2_xxs(x, dst, n / 256);
            return;
        case GgmlType::IQ2_XS:
            iq2_xs(x, dst, n / 256);
            return;
        case GgmlType::IQ2_S:
            iq2_s(x, dst, n / 256);
            return;
        case GgmlType::IQ1_S:
            iq1_s(x, dst, n / 256);
            return;
        case GgmlType::IQ1_M:
            iq1_m(x, dst, n / 256);
            return;
        case GgmlType::IQ3_XXS:
            iq3_xxs(x, dst, n / 256);
            return;
        case GgmlType::IQ3_S:
            iq3_s(x, dst, n / 256);
            return;
        default:
            return;  // the caller validated the type
    }
}

}  // namespace rebox::quant
