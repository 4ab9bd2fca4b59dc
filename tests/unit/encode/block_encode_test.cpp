// Q4_1 / Q5_1 block bytes against hand-worked blocks (docs/gguf.md §2.2: d | m | [qh] | qs, value
// j in the low nibble of qs[j], value j+16 in the high nibble), d/m copied from each block's group,
// and dequantize_f32 against values worked out by hand.
#include "encode/block_encode.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "encode/bit_packer.hpp"
#include "quant_test_bytes.hpp"
#include "source/source_values.hpp"

namespace rebox {
namespace {

QuantView view(int bits, int64_t group, const std::vector<uint8_t>& codes,
               const std::vector<uint8_t>& scales, const std::vector<uint8_t>& mins) {
    return test::quant_view(bits, group, codes, FloatDtype::F16, scales, mins);
}

TEST(BlockEncode, Q4_1OneBlockHandWorked) {
    // Codes 0..15 then 15..0, packed 4-bit lsb0 by hand: byte k = c[2k] | c[2k+1] << 4.
    const std::vector<uint8_t> stream = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE,
                                         0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01};
    const std::vector<uint8_t> scales = {0x00, 0x3C};  // fp16 1.0
    const std::vector<uint8_t> mins = {0x00, 0xBC};    // fp16 -1.0
    const QuantView q = view(4, 32, stream, scales, mins);
    // d = 1.0, m = -1.0, qs[j] = j | (15 - j) << 4.
    const std::vector<uint8_t> expected = {0x00, 0x3C, 0x00, 0xBC, 0xF0, 0xE1, 0xD2,
                                           0xC3, 0xB4, 0xA5, 0x96, 0x87, 0x78, 0x69,
                                           0x5A, 0x4B, 0x3C, 0x2D, 0x1E, 0x0F};
    std::vector<uint8_t> out(kQ4_1BlockBytes, 0x55);
    encode_q4_1(q, 0, 1, out.data());
    EXPECT_EQ(out, expected);
}

TEST(BlockEncode, Q5_1OneBlockHandWorked) {
    std::vector<uint8_t> codes(32);
    for (int j = 0; j < 32; ++j) codes[j] = static_cast<uint8_t>(j);
    const std::vector<uint8_t> stream = test::pack_lsb0_bitwise(codes, 5);
    const std::vector<uint8_t> scales = {0x00, 0x38};  // fp16 0.5
    const std::vector<uint8_t> mins = {0x00, 0x00};
    const QuantView q = view(5, 32, stream, scales, mins);
    // qh: bit j = bit 4 of code j = 1 for j >= 16 -> 0xFFFF0000 little-endian; qs[j] = j | j << 4.
    const std::vector<uint8_t> expected = {0x00, 0x38, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF,
                                           0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                           0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF};
    std::vector<uint8_t> out(kQ5_1BlockBytes, 0x55);
    encode_q5_1(q, 0, 1, out.data());
    EXPECT_EQ(out, expected);
}

TEST(BlockEncode, Q5_1HighBitsPerElement) {
    // Only code 3 and code 20 have bit 4 set: qh = (1 << 3) | (1 << 20) = 0x00100008.
    std::vector<uint8_t> codes(32, 1);
    codes[3] = 0x11;
    codes[20] = 0x1F;
    const std::vector<uint8_t> stream = test::pack_lsb0_bitwise(codes, 5);
    const std::vector<uint8_t> halves = test::u16_le({0x1234});
    const QuantView q = view(5, 32, stream, halves, halves);
    std::vector<uint8_t> out(kQ5_1BlockBytes);
    encode_q5_1(q, 0, 1, out.data());
    EXPECT_EQ(out[4], 0x08);
    EXPECT_EQ(out[5], 0x00);
    EXPECT_EQ(out[6], 0x10);
    EXPECT_EQ(out[7], 0x00);
    EXPECT_EQ(out[8 + 3], 0x11);  // low nibble 1 (code 3 & 15), high nibble 1 (code 19)
    EXPECT_EQ(out[8 + 4], 0xF1);  // code 4 = 1, code 20 & 15 = 15
}

// Each block's d/m are its group's scale/min bits and its nibbles are its codes, for a tensor large
// enough to cross the kernel's internal chunk size; a sub-range encodes to the same bytes.
void check_q4_1_tensor(int bits, int64_t group, size_t rows, size_t cols) {
    std::mt19937_64 rng(bits * 1000 + group);
    const size_t n = rows * cols;
    std::vector<uint8_t> codes(n);
    for (auto& c : codes) c = static_cast<uint8_t>(rng() & ((1u << bits) - 1));
    std::vector<uint16_t> scale_bits(n / group), min_bits(n / group);
    for (size_t g = 0; g < scale_bits.size(); ++g) {
        scale_bits[g] = static_cast<uint16_t>(rng() & 0x7BFF);  // finite, distinct-ish
        min_bits[g] = static_cast<uint16_t>(rng() & 0xFBFF);
    }
    const std::vector<uint8_t> stream = test::pack_lsb0_bitwise(codes, bits);
    const std::vector<uint8_t> scales = test::u16_le(scale_bits), mins = test::u16_le(min_bits);
    const QuantView q = view(bits, group, stream, scales, mins);
    const size_t n_blocks = n / 32;
    std::vector<uint8_t> out(n_blocks * kQ4_1BlockBytes);
    encode_q4_1(q, 0, n_blocks, out.data());
    for (size_t b = 0; b < n_blocks; ++b) {
        const uint8_t* block = out.data() + b * kQ4_1BlockBytes;
        const size_t g = b * 32 / group;
        ASSERT_EQ(block[0] | block[1] << 8, scale_bits[g]) << "block " << b;
        ASSERT_EQ(block[2] | block[3] << 8, min_bits[g]) << "block " << b;
        for (size_t j = 0; j < 16; ++j) {
            ASSERT_EQ(block[4 + j] & 0x0F, codes[b * 32 + j]) << "block " << b << " j " << j;
            ASSERT_EQ(block[4 + j] >> 4, codes[b * 32 + j + 16]) << "block " << b << " j " << j;
        }
    }
    std::vector<uint8_t> part(5 * kQ4_1BlockBytes);
    encode_q4_1(q, n_blocks - 5, 5, part.data());  // the last 5 blocks
    EXPECT_TRUE(
        std::equal(part.begin(), part.end(), out.begin() + (n_blocks - 5) * kQ4_1BlockBytes));
}

TEST(BlockEncode, Q4_1ThreeBitGroup32CopiesEachGroup) { check_q4_1_tensor(3, 32, 12, 736); }
TEST(BlockEncode, Q4_1FourBitGroup64CopiesEachGroup) { check_q4_1_tensor(4, 64, 10, 1024); }
// Groups of three blocks (the sub-range starts inside one) and the generic unpack path (2 bits).
TEST(BlockEncode, Q4_1ThreeBitGroup96StartsMidGroup) { check_q4_1_tensor(3, 96, 4, 768); }
TEST(BlockEncode, Q4_1TwoBitGroup128CopiesEachGroup) { check_q4_1_tensor(2, 128, 6, 1024); }

TEST(BlockEncode, DequantizeF32HandValues) {
    // bits 3, group 4: codes {0,7,3,5 | 1,2,6,4}; scales {0.5, 2.0}; mins {-1.0, 0.25}.
    const std::vector<uint8_t> stream = test::pack_lsb0_bitwise({0, 7, 3, 5, 1, 2, 6, 4}, 3);
    const std::vector<uint8_t> scales = test::u16_le({0x3800, 0x4000});
    const std::vector<uint8_t> mins = test::u16_le({0xBC00, 0x3400});
    const QuantView q = view(3, 4, stream, scales, mins);
    float out[8];
    dequantize_f32(q, 0, 8, out);
    const float expected[8] = {-1.0f, 2.5f, 0.5f, 1.5f, 2.25f, 4.25f, 12.25f, 8.25f};
    for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], expected[i]) << i;
    float part[5];
    dequantize_f32(q, 2, 5, part);  // starts mid-group, crosses into group 1
    for (int i = 0; i < 5; ++i) EXPECT_EQ(part[i], expected[2 + i]) << i;
}

TEST(BlockEncode, DequantizeF32RoundsOnceInTheAdd) {
    // scale = 1 + 2^-10 (0x3C01), code 7: the product 7 + 7*2^-10 is exact in binary32. min = 2^14
    // (0x7400): ulp(16384) = 2^-9 and 7*2^-10 = 3.5 ulp, a tie, so the sum rounds to even:
    // 16391 + 4*2^-9 = 16391.0078125.
    const std::vector<uint8_t> stream = test::pack_lsb0_bitwise({7}, 3);
    const std::vector<uint8_t> scales = test::u16_le({0x3C01});
    const std::vector<uint8_t> mins = test::u16_le({0x7400});
    QuantView q = view(3, 1, stream, scales, mins);
    float out = 0;
    dequantize_f32(q, 0, 1, &out);
    EXPECT_EQ(out, 16391.0078125f);
}

}  // namespace
}  // namespace rebox
