// verify's own ggml block dequantizers on hand-written blocks (layouts docs/gguf.md §2.2) with the
// expected floats worked out by hand.
#include "verify/values/ref_dequant.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

void put_u16(std::vector<uint8_t>& bytes, uint16_t v) {
    bytes.push_back(static_cast<uint8_t>(v & 0xff));
    bytes.push_back(static_cast<uint8_t>(v >> 8));
}
void put_u32(std::vector<uint8_t>& bytes, uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

TEST(VerifyDequant, Q4_1LowNibblesFirstThenHigh) {
    std::vector<uint8_t> block;
    put_u16(block, 0x3800);  // d = 0.5
    put_u16(block, 0xBC00);  // m = -1.0
    for (int j = 0; j < 16; ++j) block.push_back(static_cast<uint8_t>(j | ((15 - j) << 4)));
    ASSERT_EQ(block.size(), 20u);
    // value j = j*0.5 - 1; value j+16 = (15-j)*0.5 - 1.
    const std::vector<float> expected = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f,  2.5f,
                                         3.0f,  3.5f,  4.0f, 4.5f, 5.0f, 5.5f, 6.0f,  6.5f,
                                         6.5f,  6.0f,  5.5f, 5.0f, 4.5f, 4.0f, 3.5f,  3.0f,
                                         2.5f,  2.0f,  1.5f, 1.0f, 0.5f, 0.0f, -0.5f, -1.0f};
    std::vector<float> out(32);
    dequantize_q4_1(block, out);
    for (size_t i = 0; i < 32; ++i)
        EXPECT_EQ(float_bits(out[i]), float_bits(expected[i])) << "value " << i;
}

TEST(VerifyDequant, Q4_1TwoBlocksThroughRange) {
    std::vector<uint8_t> bytes;
    for (uint16_t d : {0x3C00, 0x4000}) {  // 1.0, 2.0
        put_u16(bytes, d);
        put_u16(bytes, 0x0000);                              // m = +0
        for (int j = 0; j < 16; ++j) bytes.push_back(0x21);  // low 1, high 2
    }
    std::vector<float> out(32);
    dequantize_range(3, bytes, 32, out);  // second block only
    EXPECT_EQ(out[0], 2.0f);              // 1 * 2.0
    EXPECT_EQ(out[16], 4.0f);             // 2 * 2.0
    EXPECT_EQ(out[31], 4.0f);
}

TEST(VerifyDequant, Q8_0SignedCodes) {
    std::vector<uint8_t> block;
    put_u16(block, 0x4000);  // d = 2.0
    for (int j = 0; j < 32; ++j) block.push_back(static_cast<uint8_t>(static_cast<int8_t>(j - 16)));
    std::vector<float> out(32);
    dequantize_q8_0(block, out);
    EXPECT_EQ(out[0], -32.0f);  // -16 * 2
    EXPECT_EQ(out[15], -2.0f);
    EXPECT_EQ(float_bits(out[16]), 0x00000000u);  // 0 * 2 = +0
    EXPECT_EQ(out[31], 30.0f);                    // 15 * 2
}

TEST(VerifyDequant, Q4_0OffsetByEight) {
    std::vector<uint8_t> block;
    put_u16(block, 0x3C00);                              // d = 1.0
    block.push_back(0x80);                               // low 0 -> -8, high 8 -> 0
    for (int j = 1; j < 16; ++j) block.push_back(0x0F);  // low 15 -> 7, high 0 -> -8
    std::vector<float> out(32);
    dequantize_q4_0(block, out);
    EXPECT_EQ(out[0], -8.0f);
    EXPECT_EQ(out[16], 0.0f);
    for (int j = 1; j < 16; ++j) {
        EXPECT_EQ(out[j], 7.0f) << j;
        EXPECT_EQ(out[j + 16], -8.0f) << j;
    }
}

TEST(VerifyDequant, Q5_1FifthBitFromQh) {
    std::vector<uint8_t> block;
    put_u16(block, 0x3C00);      // d = 1.0
    put_u16(block, 0x3400);      // m = 0.25
    put_u32(block, 0x80000001);  // fifth bit of value 0 and value 31
    std::vector<uint8_t> qs(16, 0);
    qs[0] = 0x21;   // value 0: 1|16 = 17; value 16: 2
    qs[15] = 0xF3;  // value 15: 3; value 31: 15|16 = 31
    block.insert(block.end(), qs.begin(), qs.end());
    std::vector<float> out(32);
    dequantize_q5_1(block, out);
    EXPECT_EQ(out[0], 17.25f);
    EXPECT_EQ(out[16], 2.25f);
    EXPECT_EQ(out[15], 3.25f);
    EXPECT_EQ(out[31], 31.25f);
    EXPECT_EQ(out[1], 0.25f);
    EXPECT_EQ(out[30], 0.25f);
}

TEST(VerifyDequant, Q5_0OffsetBySixteen) {
    std::vector<uint8_t> block;
    put_u16(block, 0x3800);      // d = 0.5
    put_u32(block, 0x00010000);  // fifth bit of value 16 only
    for (int j = 0; j < 16; ++j) block.push_back(0x00);
    std::vector<float> out(32);
    dequantize_q5_0(block, out);
    EXPECT_EQ(out[0], -8.0f);  // (0 - 16) * 0.5
    EXPECT_EQ(out[16], 0.0f);  // (16 - 16) * 0.5
    EXPECT_EQ(out[17], -8.0f);
}

TEST(VerifyDequant, ElementTypes) {
    std::vector<uint8_t> f16, bf16, f32;
    put_u16(f16, 0x7bff);
    put_u16(f16, 0x8000);
    put_u16(bf16, 0x3f80);
    put_u16(bf16, 0xc040);
    put_u32(f32, 0x3F800000);
    put_u32(f32, 0x80000000);
    std::vector<float> out(2);
    dequantize_range(1, f16, 0, out);
    EXPECT_EQ(out[0], 65504.0f);
    EXPECT_EQ(float_bits(out[1]), 0x80000000u);
    dequantize_range(30, bf16, 0, out);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], -3.0f);
    dequantize_range(0, f32, 0, out);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(float_bits(out[1]), 0x80000000u);
}

TEST(VerifyDequant, OnlyTheListedTypesAreDecodable) {
    for (uint32_t id : {0u, 1u, 2u, 3u, 6u, 7u, 8u, 30u, 39u, 40u})
        EXPECT_TRUE(decodable_type(id, nullptr)) << id;
    DecodableType nvfp4{};
    ASSERT_TRUE(decodable_type(40u, &nvfp4));
    EXPECT_EQ(nvfp4.block_size, 64u);
    EXPECT_EQ(nvfp4.block_bytes, 36u);
    for (uint32_t id : {9u, 10u, 12u, 14u, 20u, 24u, 28u, 41u, 42u})
        EXPECT_FALSE(decodable_type(id, nullptr)) << id;
}

}  // namespace
}  // namespace rebox::verify_ref
