// rebox::dequantize_row (ggml's dequantize_row_<type>, which `rebox diff` reads values with)
// against values worked out by hand from ggml's block layouts (ggml-common.h): fp16 scale bytes,
// nibble order (low nibbles are elements 0..15), the Q5 fifth bit in qh, signed Q8_0 codes,
// Q4_K's 6-bit sub-block scales, MXFP4's E8M0 exponent and doubled E2M1 table, NVFP4's UE4M3
// scale per 16 values and its nibble order.
#include <gtest/gtest.h>

#include <vector>

#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"
#include "rebox/rebox.hpp"

namespace rebox {
namespace {

// n values from byte `offset` of `bytes`.
std::vector<float> dequant(GgmlType type, const std::vector<uint8_t>& bytes, size_t n,
                           size_t offset = 0) {
    std::vector<float> out(n, -999.0f);
    dequantize_row(type, bytes.data() + offset, out.data(), static_cast<int64_t>(n));
    return out;
}

TEST(DequantizeByHand, Q4_0LowNibblesFirstMinusEight) {
    std::vector<uint8_t> b(18, 0x88);  // every code 8 -> 0
    b[0] = 0x00, b[1] = 0x3C;          // d = 1.0
    b[2] = 0x0F;                       // element 0 code 15 -> 7, element 16 code 0 -> -8
    const auto y = dequant(GgmlType::Q4_0, b, 32);
    EXPECT_EQ(y[0], 7.0f);
    EXPECT_EQ(y[16], -8.0f);
    EXPECT_EQ(y[1], 0.0f);
}

TEST(DequantizeByHand, Q4_1ScaleAndMin) {
    std::vector<uint8_t> b(20, 0);
    b[0] = 0x00, b[1] = 0x40;  // d = 2.0
    b[2] = 0x00, b[3] = 0xBC;  // m = -1.0
    b[4] = 0x2F;               // element 0: 15*2-1 = 29; element 16: 2*2-1 = 3
    const auto y = dequant(GgmlType::Q4_1, b, 32);
    EXPECT_EQ(y[0], 29.0f);
    EXPECT_EQ(y[16], 3.0f);
    EXPECT_EQ(y[5], -1.0f);
}

TEST(DequantizeByHand, Q5_0FifthBitFromQh) {
    std::vector<uint8_t> b(22, 0);
    b[0] = 0x00, b[1] = 0x38;                            // d = 0.5
    b[2] = 0x01, b[3] = 0x00, b[4] = 0x01, b[5] = 0x00;  // qh bits 0 and 16
    b[6] = 0x31;  // element 0: (1|16)-16 = 1; element 16: (3|16)-16 = 3
    const auto y = dequant(GgmlType::Q5_0, b, 32);
    EXPECT_EQ(y[0], 0.5f);
    EXPECT_EQ(y[16], 1.5f);
    EXPECT_EQ(y[1], -8.0f);  // code 0 without the fifth bit: -16 * 0.5
}

TEST(DequantizeByHand, Q5_1HighestBitIsElement31) {
    std::vector<uint8_t> b(24, 0);
    b[0] = 0x00, b[1] = 0x3C;  // d = 1.0
    b[2] = 0x00, b[3] = 0x34;  // m = 0.25
    b[7] = 0x80;               // qh bit 31 -> element 31
    b[8 + 15] = 0xF0;          // element 31 low bits 15 -> 31; element 15 code 0
    const auto y = dequant(GgmlType::Q5_1, b, 32);
    EXPECT_EQ(y[31], 31.25f);
    EXPECT_EQ(y[15], 0.25f);
}

TEST(DequantizeByHand, Q8_0SignedCodes) {
    std::vector<uint8_t> b(34, 0);
    b[0] = 0x00, b[1] = 0x34;  // d = 0.25
    b[2] = 0x80;               // -128
    b[33] = 0x7F;              // 127
    const auto y = dequant(GgmlType::Q8_0, b, 32);
    EXPECT_EQ(y[0], -32.0f);
    EXPECT_EQ(y[31], 31.75f);
}

TEST(DequantizeByHand, HalfWidthFloatsAndASecondBlock) {
    const std::vector<uint8_t> f16 = {0x00, 0x3C, 0x00, 0xC0};  // 1.0, -2.0
    EXPECT_EQ(dequant(GgmlType::F16, f16, 2), (std::vector<float>{1.0f, -2.0f}));
    const std::vector<uint8_t> bf16 = {0x80, 0x3F, 0x00, 0xC0};  // 1.0, -2.0
    EXPECT_EQ(dequant(GgmlType::BF16, bf16, 1, 2), (std::vector<float>{-2.0f}));
    std::vector<uint8_t> two(68, 0);
    two[34] = 0x00, two[35] = 0x3C;  // block 1: d = 1.0
    two[36] = 5;
    EXPECT_EQ(dequant(GgmlType::Q8_0, two, 32, 34)[0], 5.0f);
}

// block_q4_K: d, dmin (fp16), scales[12], qs[128]. Sub-block 0 takes scale scales[0] & 63 and min
// scales[4] & 63; its 32 values are the low nibbles of qs[0..31]: y = d*sc*q - dmin*m.
TEST(DequantizeByHand, Q4_KSubBlockScaleAndMin) {
    std::vector<uint8_t> b(144, 0);
    b[0] = 0x00, b[1] = 0x40;  // d = 2.0
    b[2] = 0x00, b[3] = 0x3C;  // dmin = 1.0
    b[4] = 3;                  // sub-block 0: sc = 3
    b[8] = 5;                  // sub-block 0: m = 5
    b[16] = 0x97;              // value 0: q 7; value 32 (sub-block 1, sc 0, m 0): q 9
    const auto y = dequant(GgmlType::Q4_K, b, 256);
    EXPECT_EQ(y[0], 2.0f * 3 * 7 - 5.0f);  // 37
    EXPECT_EQ(y[1], -5.0f);                // q 0
    EXPECT_EQ(y[32], 0.0f);                // scale 0
}

// block_mxfp4: e (E8M0), qs[16]; y = kvalues_mxfp4[q] * 2^(e - 128), the table holding twice the
// E2M1 values (0, 1, 2, 3, 4, 6, 8, 12, then negated).
TEST(DequantizeByHand, Mxfp4ExponentAndDoubledTable) {
    std::vector<uint8_t> b(17, 0);
    b[0] = 129;   // 2^(129 - 128) = 2
    b[1] = 0xF7;  // value 0: q 7 -> 12 * 2; value 16: q 15 -> -12 * 2
    const auto y = dequant(GgmlType::MXFP4, b, 32);
    EXPECT_EQ(y[0], 24.0f);
    EXPECT_EQ(y[16], -24.0f);
    EXPECT_EQ(y[1], 0.0f);
}

// block_nvfp4: d[4] (UE4M3, one per 16 values), qs[32]. UE4M3: exponent bits 6..3 with bias 7,
// mantissa bits 2..0, subnormal m * 2^-9 at exponent 0; ggml halves it (its E2M1 table is doubled),
// so y = E2M1(q) * scale. E2M1 codes 0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6; 8..15 the negatives. In
// sub-block s, byte qs[8s + j] holds value 16s + j (low nibble) and 16s + j + 8 (high nibble).
TEST(DequantizeByHand, Nvfp4Ue4m3ScalePerSixteenValues) {
    std::vector<uint8_t> b(72, 0);
    b[0] = 0x38;   // exponent 7, mantissa 0: 1.0
    b[1] = 0x01;   // subnormal: 1 * 2^-9
    b[2] = 0x7F;   // E4M3's NaN code: ggml reads it as scale 0
    b[3] = 0x7E;   // exponent 15, mantissa 6: 1.75 * 2^8 = 448, the largest scale
    b[4] = 0x97;   // value 0: code 7 -> 6 * 1; value 8: code 9 -> -0.5 * 1
    b[11] = 0x2A;  // value 7: code 10 -> -1; value 15: code 2 -> 1
    b[12] = 0x51;  // value 16: code 1 -> 0.5 * 2^-9; value 24: code 5 -> 3 * 2^-9
    b[20] = 0x77;  // values 32 and 40: code 7 under scale 0 -> 0
    b[28] = 0xF9;  // value 48: code 9 -> -0.5 * 448; value 56: code 15 -> -6 * 448
    // second block (bytes 36..71): ggml reads only bits 6..0 of a scale, so 0xB8 is 1.0 too
    b[36] = 0xB8;
    b[37] = 0x40;  // exponent 8, mantissa 0: 2.0
    b[40] = 0x04;  // value 64: code 4 -> 2 * 1
    b[48] = 0x30;  // value 80: code 0 -> 0; value 88: code 3 -> 1.5 * 2
    const auto y = dequant(GgmlType::NVFP4, b, 128);
    EXPECT_EQ(y[0], 6.0f);
    EXPECT_EQ(y[8], -0.5f);
    EXPECT_EQ(y[7], -1.0f);
    EXPECT_EQ(y[15], 1.0f);
    EXPECT_EQ(y[1], 0.0f);
    EXPECT_EQ(y[16], 0.0009765625f);  // 2^-10
    EXPECT_EQ(y[24], 0.005859375f);   // 3 * 2^-9
    EXPECT_EQ(y[32], 0.0f);
    EXPECT_EQ(y[40], 0.0f);
    EXPECT_EQ(y[48], -224.0f);
    EXPECT_EQ(y[56], -2688.0f);
    EXPECT_EQ(y[64], 2.0f);
    EXPECT_EQ(y[72], 0.0f);
    EXPECT_EQ(y[80], 0.0f);
    EXPECT_EQ(y[88], 3.0f);
}

TEST(DequantizeByHand, TypesWithoutADequantizerAreRefused) {
    std::vector<float> out(32);
    const std::vector<uint8_t> q8_1(36, 0);
    EXPECT_THROW(dequantize_row(GgmlType::Q8_1, q8_1.data(), out.data(), 32), Error);
}

}  // namespace
}  // namespace rebox
