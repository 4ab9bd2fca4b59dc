// verify's own FP4 decoders against hand-worked blocks (ggml's doubled table times half the
// scale; NVFP4's UE4M3 sign bit ignored and 0x7F read as 0) and its source reading (E2M1 from
// the code's bits, -0 read as +0 only when the GGUF holds FP4 blocks).
#include "verify/values/ref_fp4.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace rebox::verify_ref {
namespace {

TEST(RefFp4, Mxfp4BlockLowNibbleIsJHighIsJPlus16) {
    std::vector<uint8_t> block(17, 0);
    block[0] = 0x80;   // 2^(128-127) = 2
    block[1] = 0x21;   // c[0] = 1 (0.5), c[16] = 2 (1.0)
    block[16] = 0xf9;  // c[15] = 9 (-0.5), c[31] = 15 (-6)
    std::vector<float> out(32);
    dequantize_mxfp4(block, out);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[16], 2.0f);
    EXPECT_EQ(out[15], -1.0f);
    EXPECT_EQ(out[31], -12.0f);
    EXPECT_EQ(out[1], 0.0f);
}

TEST(RefFp4, Nvfp4SubBlocksAndScaleBytes) {
    std::vector<uint8_t> block(36, 0);
    block[0] = 0x38;   // 1.0
    block[1] = 0xb8;   // sign bit set: ggml reads 1.0
    block[2] = 0x7f;   // E4M3 NaN: ggml reads 0
    block[4] = 0x7f;   // sub-block 0: c[0] = 15 (-6), c[8] = 7 (6)
    block[12] = 0x01;  // sub-block 1: c[16] = 1 (0.5), c[24] = 0
    block[20] = 0x77;  // sub-block 2: scale 0
    std::vector<float> out(64);
    dequantize_nvfp4(block, out);
    EXPECT_EQ(out[0], -6.0f);
    EXPECT_EQ(out[8], 6.0f);
    EXPECT_EQ(out[16], 0.5f);
    EXPECT_EQ(out[24], 0.0f);
    EXPECT_EQ(out[32], 0.0f);
    EXPECT_EQ(out[40], 0.0f);
}

TEST(RefFp4, SourceValuesAndNegativeZero) {
    const std::vector<uint8_t> codes = {0x8b, 0x00};  // c[0] = 11 (-1.5), c[1] = 8 (-0)
    const std::vector<uint8_t> e8m0 = {0x7d};         // 2^-2
    const Fp4Source mx{false, 32, codes, e8m0};
    std::vector<float> out(2);
    expected_from_fp4(mx, 0, out, /*plus_zero=*/false);
    EXPECT_EQ(out[0], -0.375f);
    EXPECT_TRUE(std::signbit(out[1]));
    expected_from_fp4(mx, 0, out, /*plus_zero=*/true);
    EXPECT_FALSE(std::signbit(out[1]));
    const std::vector<uint8_t> e4m3 = {0x4a};  // 2^(9-7) * 1.25 = 5
    expected_from_fp4(Fp4Source{true, 16, codes, e4m3}, 0, out, true);
    EXPECT_EQ(out[0], -7.5f);
}

}  // namespace
}  // namespace rebox::verify_ref
