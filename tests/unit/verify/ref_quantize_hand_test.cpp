// verify's re-quantizer on hand-worked blocks (ggml-quants.c's formulas worked on paper), so the
// suite checks it even without the npm oracle: Q8_0's round-half-away codes, Q4_0's truncation
// after +8.5 and the sign of its scale, Q4_1's min, nearest_int's ties to even, and the all-zero
// block of each K / IQ4 / MXFP4 type (IQ4_XS's -0.0 scale and code 8).
#include <gtest/gtest.h>

#include <vector>

#include "verify/quantized/ref_quant_search.hpp"
#include "verify/quantized/ref_quantize.hpp"

namespace rebox::verify_ref {
namespace {

std::vector<uint8_t> quantize_one(uint32_t type, const std::vector<float>& x) {
    RefQuantLayout layout{};
    EXPECT_TRUE(ref_quant_layout(type, &layout));
    std::vector<uint8_t> out(layout.block_bytes, 0xcd);
    ref_quantize_block(type, make_quant_row(type, x, {}), 0, out);
    return out;
}

TEST(VerifyRefQuantizeHand, NearestIntTiesToEven) {
    EXPECT_EQ(quant_search::nearest_int(2.5f), 2);
    EXPECT_EQ(quant_search::nearest_int(3.5f), 4);
    EXPECT_EQ(quant_search::nearest_int(-2.5f), -2);
    EXPECT_EQ(quant_search::nearest_int(0.49999997f), 0);
    EXPECT_EQ(quant_search::nearest_int(-7.6f), -8);
}

TEST(VerifyRefQuantizeHand, Q8_0RoundsHalfAwayFromZero) {
    // amax 127 -> d = 1 (fp16 0x3c00), codes roundf(x): 0.5 -> 1, -0.5 -> -1, 2.5 -> 3.
    std::vector<float> x(32, 0.f);
    x[0] = 127, x[1] = -127, x[2] = 0.5f, x[3] = -0.5f, x[4] = 2.5f, x[5] = 1.49f;
    const auto q = quantize_one(8, x);
    EXPECT_EQ(q[0], 0x00);
    EXPECT_EQ(q[1], 0x3c);
    const int8_t expected[6] = {127, -127, 1, -1, 3, 1};
    for (int j = 0; j < 6; ++j) EXPECT_EQ(static_cast<int8_t>(q[2 + j]), expected[j]) << j;
    EXPECT_EQ(q[2 + 6], 0);
}

TEST(VerifyRefQuantizeHand, Q4_0TruncatesAndTakesTheSignedExtreme) {
    // extreme -8 -> d = -8 / -8 = 1, code = min(15, trunc(x + 8.5)).
    std::vector<float> x(32, 0.f);
    x[0] = -8, x[1] = 7.4f, x[2] = 0.5f, x[3] = 0.49f, x[16] = 7, x[17] = -7.6f;
    auto q = quantize_one(2, x);
    EXPECT_EQ(q[0], 0x00);
    EXPECT_EQ(q[1], 0x3c);
    EXPECT_EQ(q[2 + 0], 0 | (15 << 4));  // -8 -> 0; 7 -> 15
    EXPECT_EQ(q[2 + 1], 15 | (0 << 4));  // 7.4 -> 15; -7.6 -> trunc(0.9) = 0
    EXPECT_EQ(q[2 + 2], 9 | (8 << 4));   // 0.5 -> trunc(9.0) = 9; 0 -> 8
    EXPECT_EQ(q[2 + 3], 8 | (8 << 4));   // 0.49 -> trunc(8.99) = 8
    // extreme +8 -> d = -1 (0xbc00): 8 -> trunc(0.5) = 0, -8 -> min(15, 16) = 15.
    x[0] = 8, x[1] = -8;
    q = quantize_one(2, x);
    EXPECT_EQ(q[1], 0xbc);
    EXPECT_EQ(q[2] & 0xf, 0);
    EXPECT_EQ(q[3] & 0xf, 15);
}

TEST(VerifyRefQuantizeHand, Q4_1StoresTheMinimum) {
    // min -1, max 14 -> d = 15/15 = 1 (0x3c00), m = -1 (0xbc00), code = trunc(x + 1 + 0.5).
    std::vector<float> x(32, 0.f);
    x[0] = -1, x[1] = 14, x[2] = 0.5f, x[16] = 2.4f;
    const auto q = quantize_one(3, x);
    EXPECT_EQ(q[0] | (q[1] << 8), 0x3c00);
    EXPECT_EQ(q[2] | (q[3] << 8), 0xbc00);
    EXPECT_EQ(q[4 + 0], 0 | (3 << 4));   // -1 -> 0; 2.4 -> trunc(3.9) = 3
    EXPECT_EQ(q[4 + 1], 15 | (1 << 4));  // 14 -> 15; 0 -> 1
    EXPECT_EQ(q[4 + 2], 2 | (1 << 4));   // 0.5 -> trunc(2.0) = 2
}

TEST(VerifyRefQuantizeHand, AllZeroBlocks) {
    const std::vector<float> zeros256(256, 0.f), zeros32(32, 0.f);
    // Q2_K..Q6_K: every byte zero (Q3_K too: its group search returns code 0 before the +4
    // offset for an all-zero group, so no high bit is set).
    for (const uint32_t type : {10u, 11u, 12u, 13u, 14u}) {
        const auto q = quantize_one(type, zeros256);
        for (size_t i = 0; i < q.size(); ++i)
            ASSERT_EQ(q[i], 0) << "type " << type << " byte " << i;
    }
    // IQ4_XS: d = -0.0 / 32 stored as 0x8000, every sub-block scale code 0 + 32 (low nibble 0,
    // high bits 2 -> scales_h 0xaaaa), codes the grid's nearest to 0: index 8 (value 1).
    const auto xs = quantize_one(23, zeros256);
    EXPECT_EQ(xs[0], 0x00);
    EXPECT_EQ(xs[1], 0x80);
    EXPECT_EQ(xs[2], 0xaa);
    EXPECT_EQ(xs[3], 0xaa);
    for (size_t i = 4; i < 8; ++i) EXPECT_EQ(xs[i], 0x00);
    for (size_t i = 8; i < 136; ++i) ASSERT_EQ(xs[i], 0x88) << i;
    const auto nl = quantize_one(20, zeros32);  // IQ4_NL: d = 0, codes 8
    EXPECT_EQ(nl[0] | nl[1], 0);
    for (size_t i = 2; i < 18; ++i) ASSERT_EQ(nl[i], 0x88) << i;
    const auto fp4 = quantize_one(39, zeros32);  // MXFP4: e = 0, code 0 (the first zero)
    for (size_t i = 0; i < 17; ++i) ASSERT_EQ(fp4[i], 0) << i;
}

}  // namespace
}  // namespace rebox::verify_ref
