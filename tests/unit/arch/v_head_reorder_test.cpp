// The linear-attention transforms of Qwen3.5 / Qwen3-Next against index vectors worked out by hand
// from _LinearAttentionVReorderBase._reorder_v_heads (an axis seen as [k_heads, v_heads / k_heads,
// unit], the first two swapped: GGUF head j * k_heads + k holds source head k * (v/k) + j) and
// values of -exp(A_log) worked out by hand. Both the writer's maps (src/arch/transforms) and
// verify's own GGUF-side inverse (src/verify/values/ref_linear_attention) must give them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "arch/transforms.hpp"
#include "format/half.hpp"
#include "verify/values/ref_linear_attention.hpp"

namespace rebox {
namespace {

struct VHeadCase {
    uint64_t rows, first;
    uint32_t k_heads, v_heads;
    uint64_t unit;
    std::vector<uint32_t> source_of;  // GGUF row r holds source row source_of[r]
};

const VHeadCase kVHeadCases[] = {
    // k_heads == v_heads: nothing moves.
    {3, 0, 3, 3, 1, {0, 1, 2}},
    // 2 key heads, 4 value heads: source k0v0 k0v1 k1v0 k1v1 -> GGUF k0v0 k1v0 k0v1 k1v1.
    {4, 0, 2, 4, 1, {0, 2, 1, 3}},
    // 2 key heads of 3 value heads each.
    {6, 0, 2, 6, 1, {0, 3, 1, 4, 2, 5}},
    // 3 key heads of 2 value heads each.
    {6, 0, 3, 6, 1, {0, 2, 4, 1, 3, 5}},
    // in_proj_qkv-like: 3 q/k rows stay, then 4 value heads of 2 rows (head_v_dim 2).
    {11, 3, 2, 4, 2, {0, 1, 2, 3, 4, 7, 8, 5, 6, 9, 10}},
};

TEST(VHeadReorder, WriterRowMapMatchesHandVectors) {
    for (const VHeadCase& c : kVHeadCases) {
        const auto map = arch::v_head_source_rows(c.rows, c.first, c.k_heads, c.v_heads, c.unit);
        ASSERT_TRUE(map.has_value()) << c.rows << " rows, " << c.k_heads << "/" << c.v_heads;
        EXPECT_EQ(*map, c.source_of) << c.rows << " rows, " << c.k_heads << "/" << c.v_heads;
    }
}

TEST(VHeadReorder, VerifyInverseMatchesHandVectors) {
    for (const VHeadCase& c : kVHeadCases) {
        std::vector<uint32_t> got;
        for (uint64_t r = 0; r < c.rows; ++r)
            got.push_back(static_cast<uint32_t>(
                verify_ref::v_head_source_row(r, c.first, c.k_heads, c.v_heads, c.unit)));
        EXPECT_EQ(got, c.source_of) << c.rows << " rows, " << c.k_heads << "/" << c.v_heads;
    }
}

TEST(VHeadReorder, OutProjColumnBlocks) {
    // 2 rows of 4 value heads (2 key heads): each row's head blocks go 0 2 1 3.
    const auto blocks = arch::v_head_source_column_blocks(2, 2, 4);
    ASSERT_TRUE(blocks.has_value());
    EXPECT_EQ(*blocks, (std::vector<uint32_t>{0, 2, 1, 3, 4, 6, 5, 7}));
    // verify, per column with head_v_dim 3: GGUF columns 3..5 are source columns 6..8.
    std::vector<uint64_t> columns;
    for (uint64_t c = 0; c < 12; ++c)
        columns.push_back(verify_ref::v_head_source_column(c, 2, 4, 3));
    EXPECT_EQ(columns, (std::vector<uint64_t>{0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11}));
}

TEST(VHeadReorder, RefusesCountsThatAreNotHeads) {
    EXPECT_FALSE(arch::v_head_source_rows(6, 0, 4, 6, 1).has_value());  // 4 does not divide 6
    EXPECT_FALSE(arch::v_head_source_rows(7, 0, 2, 4, 1).has_value());  // 7 != 0 + 4 * 1
    EXPECT_FALSE(arch::v_head_source_rows(8, 3, 2, 4, 1).has_value());  // 8 != 3 + 4 * 1
    EXPECT_FALSE(arch::v_head_source_rows(0, 0, 0, 0, 1).has_value());
    EXPECT_FALSE(arch::v_head_source_column_blocks(2, 3, 4).has_value());
}

uint32_t bits_of_float(float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
}

TEST(NegExp, HandValues) {
    // -e^0 = -1 exactly; e = 2.71828182845904... rounds to binary32 0x402DF854 (2.71828174591);
    // e^-1 = 0.367879441171... to 0x3EBC5AB2.
    EXPECT_EQ(bits_of_float(arch::neg_exp_f32(0.0f)), bits_of_float(-1.0f));
    EXPECT_EQ(bits_of_float(arch::neg_exp_f32(1.0f)), 0x402DF854u | 0x80000000u);
    EXPECT_EQ(bits_of_float(arch::neg_exp_f32(-1.0f)), 0x3EBC5AB2u | 0x80000000u);
    // F16: e to fp16 is 2.71875 (0x4170: spacing 2^-9 in [2, 4), 2.71828 * 512 = 1391.76);
    // e^0.5 = 1.6487212... to 1.6484375 (1688 / 1024).
    EXPECT_EQ(arch::neg_exp_f16(0x3C00), -2.71875f);
    EXPECT_EQ(arch::neg_exp_f16(0x3800), -1.6484375f);
    EXPECT_EQ(arch::neg_exp_f16(0x0000), -1.0f);
    std::vector<float> v = {0.0f, 1.0f, -1.0f};
    verify_ref::neg_exp_as_converter(verify_ref::SourceFloat::F32, v);
    EXPECT_EQ(bits_of_float(v[1]), 0x402DF854u | 0x80000000u);
    EXPECT_EQ(bits_of_float(v[2]), 0x3EBC5AB2u | 0x80000000u);
    std::vector<float> h = {1.0f, 0.5f};
    verify_ref::neg_exp_as_converter(verify_ref::SourceFloat::F16, h);
    EXPECT_EQ(h[0], -2.71875f);
    EXPECT_EQ(h[1], -1.6484375f);
}

TEST(NegExp, WriterAndVerifyAgreeOnEveryHalf) {
    // Every fp16 A_log: the writer rounds through binary32 and settles the ties that makes,
    // verify rounds the double once; both must be the one rounding of e^x.
    size_t compared = 0;
    for (uint32_t bits = 0; bits < 0x10000; ++bits) {
        const float x = half_to_float(static_cast<uint16_t>(bits));
        if (std::isnan(x)) continue;
        std::vector<float> want = {x};
        verify_ref::neg_exp_as_converter(verify_ref::SourceFloat::F16, want);
        const float got = arch::neg_exp_f16(static_cast<uint16_t>(bits));
        ASSERT_EQ(bits_of_float(got), bits_of_float(want[0])) << "fp16 bits " << bits;
        ++compared;
    }
    EXPECT_GT(compared, 63000u);
}

}  // namespace
}  // namespace rebox
