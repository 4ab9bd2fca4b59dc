// verify's Q4_0 / Q5_0 / Q8_0 dequantizers (the targets of GPTQ / AWQ / compressed-tensors codes,
// docs/formats.md §5.0) on blocks built by hand from ggml's block layouts (docs/gguf.md §2.2:
// Q4_0 d|qs[16], Q5_0 d|qh[4]|qs[16], Q8_0 d|int8 qs[32]; value j in the low nibble of qs[j],
// value j+16 in the high nibble; qh bit j is value j's fifth bit), read as the second of two
// blocks so the block strides are checked too. Expected values worked out by hand: (q' - off) * d.
#include <gtest/gtest.h>

#include <vector>

#include "verify/values/ref_dequant.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

constexpr uint32_t kQ4_0 = 2, kQ5_0 = 6, kQ8_0 = 8;

void put_u16(std::vector<uint8_t>& bytes, uint16_t v) {
    bytes.push_back(static_cast<uint8_t>(v & 0xff));
    bytes.push_back(static_cast<uint8_t>(v >> 8));
}

// A first block of garbage (0xEE bytes) so a wrong stride reads the wrong block.
std::vector<uint8_t> first_block(size_t size) { return std::vector<uint8_t>(size, 0xEE); }

TEST(VerifyDequantZeroPoint, Q4_0NegativeScaleAndSignedZero) {
    std::vector<uint8_t> bytes = first_block(18);
    put_u16(bytes, 0xB800);  // d = -0.5
    for (int j = 0; j < 16; ++j) bytes.push_back(static_cast<uint8_t>(j | ((15 - j) << 4)));
    std::vector<float> out(32);
    dequantize_range(kQ4_0, bytes, 32, out);
    EXPECT_EQ(out[0], 4.0f);                      // (0 - 8) * -0.5
    EXPECT_EQ(float_bits(out[8]), 0x80000000u);   // (8 - 8) * -0.5 = -0
    EXPECT_EQ(out[15], -3.5f);                    // (15 - 8) * -0.5
    EXPECT_EQ(out[16], -3.5f);                    // high nibble of qs[0] = 15
    EXPECT_EQ(out[31], 4.0f);                     // high nibble of qs[15] = 0
    EXPECT_EQ(float_bits(out[23]), 0x80000000u);  // high nibble of qs[7] = 8
}

TEST(VerifyDequantZeroPoint, Q5_0FifthBitsOfBothHalves) {
    std::vector<uint8_t> bytes = first_block(22);
    put_u16(bytes, 0x3400);  // d = 0.25
    // qh = 0xAAAA5555: bit j (j < 16) set for even j; bit 16+j set for odd j.
    for (uint8_t b : {0x55, 0x55, 0xAA, 0xAA}) bytes.push_back(b);
    for (int j = 0; j < 16; ++j) bytes.push_back(static_cast<uint8_t>(j | (j << 4)));
    std::vector<float> out(32);
    dequantize_range(kQ5_0, bytes, 32, out);
    EXPECT_EQ(out[0], 0.0f);     // (0|16 - 16) * 0.25
    EXPECT_EQ(out[1], -3.75f);   // (1 - 16) * 0.25
    EXPECT_EQ(out[2], 0.5f);     // (2|16 - 16) * 0.25
    EXPECT_EQ(out[15], -0.25f);  // (15 - 16) * 0.25
    EXPECT_EQ(out[16], -4.0f);   // (0 - 16) * 0.25: bit 16 clear
    EXPECT_EQ(out[17], 0.25f);   // (1|16 - 16) * 0.25: bit 17 set
    EXPECT_EQ(out[31], 3.75f);   // (15|16 - 16) * 0.25
}

TEST(VerifyDequantZeroPoint, Q8_0ExtremeSignedCodes) {
    std::vector<uint8_t> bytes = first_block(34);
    put_u16(bytes, 0x3555);  // d = 2^-2 * (1 + 341/1024) = 0.333251953125
    const int8_t codes[4] = {-128, 127, -1, 0};
    for (int j = 0; j < 32; ++j) bytes.push_back(static_cast<uint8_t>(codes[j % 4]));
    std::vector<float> out(32);
    dequantize_range(kQ8_0, bytes, 32, out);
    EXPECT_EQ(out[0], -42.65625f);         // -128 * d (exact)
    EXPECT_EQ(out[1], 42.322998046875f);   // 127 * d (18 significant bits: exact)
    EXPECT_EQ(out[2], -0.333251953125f);   // -1 * d
    EXPECT_EQ(float_bits(out[3]), 0u);     // 0 * d = +0
    EXPECT_EQ(out[29], 42.322998046875f);  // value 29 = code 127
}

}  // namespace
}  // namespace rebox::verify_ref
