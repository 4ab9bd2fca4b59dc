// Q4_0 / Q5_0 / Q8_0 / Q4_1 blocks from integer-zero-point views against blocks worked out by hand
// from ggml's layouts (docs/gguf.md §2.2: d | [m] | [qh] | qs; Q4_0/Q5_0 value j in the low nibble
// of qs[j], value j+16 in the high one; Q5_0 qh bit j = bit 4 of value j), and every block decoded
// by this test's own ggml-rule dequantizer equal bit for bit to (q - z) * s.
#include "encode/int_block_encode.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <vector>

#include "format/half.hpp"
#include "int_quant_test_view.hpp"
#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"
#include "source/source_values.hpp"

namespace rebox {
namespace {

using test::IntTensor;

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// ggml's dequantize_row_q4_0 / q5_0 / q8_0 / q4_1 for one block, written from ggml-quants.c.
std::vector<float> ggml_dequant(GgmlType type, const uint8_t* b) {
    std::vector<float> y(32);
    const float d = half_to_float(u16(b));
    switch (type) {
        case GgmlType::Q4_0:
            for (int j = 0; j < 16; ++j) {
                y[j] = static_cast<float>((b[2 + j] & 0x0F) - 8) * d;
                y[j + 16] = static_cast<float>((b[2 + j] >> 4) - 8) * d;
            }
            break;
        case GgmlType::Q5_0: {
            const uint32_t qh =
                uint32_t{b[2]} | uint32_t{b[3]} << 8 | uint32_t{b[4]} << 16 | uint32_t{b[5]} << 24;
            for (int j = 0; j < 16; ++j) {
                const int xh0 = ((qh >> j) << 4) & 0x10, xh1 = (qh >> (j + 12)) & 0x10;
                y[j] = static_cast<float>(((b[6 + j] & 0x0F) | xh0) - 16) * d;
                y[j + 16] = static_cast<float>(((b[6 + j] >> 4) | xh1) - 16) * d;
            }
            break;
        }
        case GgmlType::Q8_0:
            for (int j = 0; j < 32; ++j)
                y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
            break;
        case GgmlType::Q5_1: {
            const float m = half_to_float(u16(b + 2));
            const uint32_t qh =
                uint32_t{b[4]} | uint32_t{b[5]} << 8 | uint32_t{b[6]} << 16 | uint32_t{b[7]} << 24;
            for (int j = 0; j < 16; ++j) {
                const int xh0 = ((qh >> j) << 4) & 0x10, xh1 = (qh >> (j + 12)) & 0x10;
                y[j] = static_cast<float>((b[8 + j] & 0x0F) | xh0) * d + m;
                y[j + 16] = static_cast<float>((b[8 + j] >> 4) | xh1) * d + m;
            }
            break;
        }
        case GgmlType::Q4_1: {
            const float m = half_to_float(u16(b + 2));
            for (int j = 0; j < 16; ++j) {
                y[j] = static_cast<float>(b[4 + j] & 0x0F) * d + m;
                y[j + 16] = static_cast<float>(b[4 + j] >> 4) * d + m;
            }
            break;
        }
        default:
            ADD_FAILURE() << "no dequantizer";
    }
    return y;
}

// (q - z) * s of row 0, group 0 of a one-group tensor, computed in double and rounded once.
void expect_values(const std::vector<float>& got, IntTensor& t) {
    const double s = t.scale_dtype == FloatDtype::BF16 ? bf16_to_float(t.scale_bits[0])
                                                       : half_to_float(t.scale_bits[0]);
    const int z = t.zeros.empty() ? t.zero_constant : t.zeros[0];
    for (int j = 0; j < 32; ++j) {
        const float want = static_cast<float>(static_cast<double>(t.codes[j] - z) * s);
        EXPECT_EQ(std::bit_cast<uint32_t>(got[j]), std::bit_cast<uint32_t>(want)) << "value " << j;
    }
}

TEST(IntBlockEncode, Q4_0HandWorked) {
    IntTensor t;
    t.zero_constant = 8;
    t.packed_words = true;  // unsigned 4-bit codes, z = 8: q' = q
    for (int j = 0; j < 32; ++j) t.codes.push_back(j < 16 ? j : 31 - j);  // q - z = j-8, 7-(j-16)
    t.scale_bits = {0x3C00};                                              // fp16 1.0
    const IntQuantView v = t.view();
    // d = 1.0; qs[j] = q'_j | q'_{j+16} << 4 = j | (15 - j) << 4.
    const std::vector<uint8_t> expected = {0x00, 0x3C, 0xF0, 0xE1, 0xD2, 0xC3, 0xB4, 0xA5, 0x96,
                                           0x87, 0x78, 0x69, 0x5A, 0x4B, 0x3C, 0x2D, 0x1E, 0x0F};
    std::vector<uint8_t> out(kQ4_0BlockBytes, 0x55);
    encode_q4_0_int(v, 0, 1, out.data());
    EXPECT_EQ(out, expected);
    expect_values(ggml_dequant(GgmlType::Q4_0, out.data()), t);
}

TEST(IntBlockEncode, Q5_0HandWorked) {
    IntTensor t;
    for (int j = 0; j < 32; ++j) t.codes.push_back(j - 13);  // signed codes
    t.zeros = {3};                                           // q - z = j - 16: q' = j
    t.scale_bits = {0x3800};                                 // fp16 0.5
    const IntQuantView v = t.view();
    // qh: bit j = bit 4 of j -> values 16..31 -> 0xFFFF0000 little-endian; qs[j] = j | j << 4.
    const std::vector<uint8_t> expected = {0x00, 0x38, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x11,
                                           0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
                                           0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF};
    std::vector<uint8_t> out(kQ5_0BlockBytes, 0x55);
    encode_q5_0_int(v, 0, 1, out.data());
    EXPECT_EQ(out, expected);
    expect_values(ggml_dequant(GgmlType::Q5_0, out.data()), t);
}

TEST(IntBlockEncode, Q8_0HandWorkedWithNegativeScale) {
    IntTensor t;
    t.bits = 8;
    t.codes = {-128, 127, -1, 0, 1};
    for (int j = 5; j < 32; ++j) t.codes.push_back(j - 16);
    t.scale_bits = {0xBC00};  // fp16 -1.0
    const IntQuantView v = t.view();
    std::vector<uint8_t> expected = {0x00, 0xBC, 0x80, 0x7F, 0xFF, 0x00, 0x01};
    for (int j = 5; j < 32; ++j) expected.push_back(static_cast<uint8_t>(j - 16));  // 0xF5..0x0F
    ASSERT_EQ(expected[7], 0xF5);
    std::vector<uint8_t> out(kQ8_0BlockBytes, 0x55);
    encode_q8_0_int(v, 0, 1, out.data());
    EXPECT_EQ(out, expected);
    // The q - z = 0 value is -0.0 ((0) * -1.0), and ggml's 0 * d gives the same -0.0.
    expect_values(ggml_dequant(GgmlType::Q8_0, out.data()), t);
}

TEST(IntBlockEncode, Q4_1HandWorked) {
    IntTensor t;
    t.packed_words = true;
    for (int j = 0; j < 32; ++j) t.codes.push_back(j % 16);
    t.zero_constant = 3;
    t.scale_bits = {0x3800};  // s = 0.5, m = -z*s = -1.5 = fp16 0xBE00
    const IntQuantView v = t.view();
    std::vector<uint8_t> expected = {0x00, 0x38, 0x00, 0xBE};
    for (int j = 0; j < 16; ++j) expected.push_back(static_cast<uint8_t>(j | j << 4));
    std::vector<uint8_t> out(kQ4_1BlockBytes, 0x55);
    encode_q4_1_int(v, 0, 1, out.data());
    EXPECT_EQ(out, expected);
    expect_values(ggml_dequant(GgmlType::Q4_1, out.data()), t);
}

TEST(IntBlockEncode, Q5_1HandWorked) {
    IntTensor t;
    t.bits = 5;
    t.packed_words = true;
    for (int j = 0; j < 32; ++j) t.codes.push_back(j);
    t.zero_constant = 5;
    t.scale_bits = {0x3800};  // s = 0.5, m = -2.5 = fp16 0xC100
    const IntQuantView v = t.view();
    // qh bit j = bit 4 of code j: 0xFFFF0000; qs[j] = (j & 15) | ((j + 16) & 15) << 4 = j | j << 4.
    std::vector<uint8_t> expected = {0x00, 0x38, 0x00, 0xC1, 0x00, 0x00, 0xFF, 0xFF};
    for (int j = 0; j < 16; ++j) expected.push_back(static_cast<uint8_t>(j | j << 4));
    std::vector<uint8_t> out(kQ5_1BlockBytes, 0x55);
    encode_q5_1_int(v, 0, 1, out.data());
    EXPECT_EQ(out, expected);
    expect_values(ggml_dequant(GgmlType::Q5_1, out.data()), t);
}

TEST(IntBlockEncode, BlocksWalkRowsAndGroups) {
    // 2 rows x 64 cols, group 32: block b = row b/2, group b%2, each with its own scale and zero.
    IntTensor t;
    t.rows = 2;
    t.cols = 64;
    for (int i = 0; i < 128; ++i) t.codes.push_back(i % 13);
    t.zeros = {1, 2, 3, 4};
    t.scale_bits = {0x3C00, 0x4000, 0x4200, 0x4400};  // 1, 2, 3, 4
    const IntQuantView v = t.view();
    std::vector<uint8_t> out(4 * kQ5_0BlockBytes);
    encode_q5_0_int(v, 0, 4, out.data());
    for (int b = 0; b < 4; ++b) {
        const std::vector<float> y = ggml_dequant(GgmlType::Q5_0, out.data() + b * kQ5_0BlockBytes);
        for (int j = 0; j < 32; ++j) {
            const int i = b * 32 + j;
            EXPECT_EQ(y[j], static_cast<float>((i % 13 - (b + 1)) * (b + 1))) << "value " << i;
        }
    }
    // The same values through dequantize_int_f32 (--outtype f32), across the row boundary.
    std::vector<float> f(96);
    dequantize_int_f32(v, 16, 96, f.data());
    for (int i = 16; i < 112; ++i)
        EXPECT_EQ(f[i - 16], static_cast<float>((i % 13 - (i / 32 + 1)) * (i / 32 + 1)));
}

TEST(IntBlockEncode, OutOfRangeAndInexactScaleThrow) {
    IntTensor t;
    t.codes.assign(32, 0);
    t.codes[5] = 8;  // q - z = 8 does not fit Q4_0's [-8, 7]
    t.scale_bits = {0x3C00};
    IntQuantView v = t.view();
    std::vector<uint8_t> out(kQ5_0BlockBytes);
    EXPECT_THROW(encode_q4_0_int(v, 0, 1, out.data()), Error);
    EXPECT_NO_THROW(encode_q5_0_int(v, 0, 1, out.data()));
    // A bf16 scale below fp16's range: refused unless every q - z of the block is 0, then d = +-0.
    IntTensor tiny;
    tiny.codes.assign(32, 0);
    tiny.scale_dtype = FloatDtype::BF16;
    tiny.scale_bits = {0xB3D7};  // bf16 -1.0e-07 (not an fp16 value)
    v = tiny.view();
    EXPECT_THROW(encode_q4_0_int(v, 0, 1, out.data()), Error);
    encode_q4_0_int(v, 0, 1, out.data(), ScaleRule::zero_when_codes_zero);
    EXPECT_EQ(u16(out.data()), 0x8000);  // -0: 0 * -1e-7 is -0.0 as well
    expect_values(ggml_dequant(GgmlType::Q4_0, out.data()), tiny);
    tiny.codes[0] = 1;
    v = tiny.view();
    EXPECT_THROW(encode_q4_0_int(v, 0, 1, out.data(), ScaleRule::zero_when_codes_zero), Error);
}

}  // namespace
}  // namespace rebox
