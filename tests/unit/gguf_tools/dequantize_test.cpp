// The diff dequantizers against values worked out by hand from ggml's block layouts
// (ggml-common.h): fp16 scale bytes, nibble order (low nibbles are elements 0..15), the Q5 fifth
// bit in qh, signed Q8_0 codes.
#include "gguf_tools/dequantize.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "rebox/ggml_type.hpp"

namespace rebox {
namespace {

std::vector<float> dequant(GgmlType type, const std::vector<uint8_t>& bytes, size_t n,
                           uint64_t first = 0) {
    std::vector<float> out(n, -999.0f);
    EXPECT_TRUE(dequantize_elements(type, bytes, first, out));
    return out;
}

TEST(Dequantize, Q4_0LowNibblesFirstMinusEight) {
    std::vector<uint8_t> b(18, 0x88);  // every code 8 -> 0
    b[0] = 0x00, b[1] = 0x3C;          // d = 1.0
    b[2] = 0x0F;                       // element 0 code 15 -> 7, element 16 code 0 -> -8
    const auto y = dequant(GgmlType::Q4_0, b, 32);
    EXPECT_EQ(y[0], 7.0f);
    EXPECT_EQ(y[16], -8.0f);
    EXPECT_EQ(y[1], 0.0f);
}

TEST(Dequantize, Q4_1ScaleAndMin) {
    std::vector<uint8_t> b(20, 0);
    b[0] = 0x00, b[1] = 0x40;  // d = 2.0
    b[2] = 0x00, b[3] = 0xBC;  // m = -1.0
    b[4] = 0x2F;               // element 0: 15*2-1 = 29; element 16: 2*2-1 = 3
    const auto y = dequant(GgmlType::Q4_1, b, 32);
    EXPECT_EQ(y[0], 29.0f);
    EXPECT_EQ(y[16], 3.0f);
    EXPECT_EQ(y[5], -1.0f);
}

TEST(Dequantize, Q5_0FifthBitFromQh) {
    std::vector<uint8_t> b(22, 0);
    b[0] = 0x00, b[1] = 0x38;                            // d = 0.5
    b[2] = 0x01, b[3] = 0x00, b[4] = 0x01, b[5] = 0x00;  // qh bits 0 and 16
    b[6] = 0x31;  // element 0: (1|16)-16 = 1; element 16: (3|16)-16 = 3
    const auto y = dequant(GgmlType::Q5_0, b, 32);
    EXPECT_EQ(y[0], 0.5f);
    EXPECT_EQ(y[16], 1.5f);
    EXPECT_EQ(y[1], -8.0f);  // code 0 without the fifth bit: -16 * 0.5
}

TEST(Dequantize, Q5_1HighestBitIsElement31) {
    std::vector<uint8_t> b(24, 0);
    b[0] = 0x00, b[1] = 0x3C;  // d = 1.0
    b[2] = 0x00, b[3] = 0x34;  // m = 0.25
    b[7] = 0x80;               // qh bit 31 -> element 31
    b[8 + 15] = 0xF0;          // element 31 low bits 15 -> 31; element 15 code 0
    const auto y = dequant(GgmlType::Q5_1, b, 32);
    EXPECT_EQ(y[31], 31.25f);
    EXPECT_EQ(y[15], 0.25f);
}

TEST(Dequantize, Q8_0SignedCodes) {
    std::vector<uint8_t> b(34, 0);
    b[0] = 0x00, b[1] = 0x34;  // d = 0.25
    b[2] = 0x80;               // -128
    b[33] = 0x7F;              // 127
    const auto y = dequant(GgmlType::Q8_0, b, 32);
    EXPECT_EQ(y[0], -32.0f);
    EXPECT_EQ(y[31], 31.75f);
}

TEST(Dequantize, HalfWidthFloatsAndOffsets) {
    const std::vector<uint8_t> f16 = {0x00, 0x3C, 0x00, 0xC0};  // 1.0, -2.0
    EXPECT_EQ(dequant(GgmlType::F16, f16, 2), (std::vector<float>{1.0f, -2.0f}));
    const std::vector<uint8_t> bf16 = {0x80, 0x3F, 0x00, 0xC0};  // 1.0, -2.0
    EXPECT_EQ(dequant(GgmlType::BF16, bf16, 1, 1), (std::vector<float>{-2.0f}));
    // A second Q8_0 block reached through `first`.
    std::vector<uint8_t> two(68, 0);
    two[34] = 0x00, two[35] = 0x3C;  // block 1: d = 1.0
    two[36] = 5;
    EXPECT_EQ(dequant(GgmlType::Q8_0, two, 32, 32)[0], 5.0f);
}

TEST(Dequantize, OtherTypesAreNotHandled) {
    EXPECT_FALSE(can_dequantize(static_cast<GgmlType>(12)));  // Q4_K
    EXPECT_FALSE(can_dequantize(GgmlType::Q8_1));
    std::vector<float> out(256);
    EXPECT_FALSE(
        dequantize_elements(static_cast<GgmlType>(14), std::vector<uint8_t>(210), 0, out));  // Q6_K
}

}  // namespace
}  // namespace rebox
