// The block type chosen for integer-zero-point tensors (docs/formats.md §5.0): the smallest of
// Q4_0 < Q4_1 < Q5_0 < Q5_1 < Q8_0 that holds every (q - z) * s exactly, and each refusal (a group
// across a 32-value block, act-order g_idx, a scale fp16 cannot hold, q - z beyond Q8_0, cols %
// 32). Expected types come from the table's ranges applied by hand to each tensor's codes.
#include <gtest/gtest.h>

#include <vector>

#include "int_quant_test_view.hpp"
#include "plan/int_quant_rules.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox {
namespace {

using plan_detail::choose_int_block_type;
using plan_detail::IntBlockChoice;
using test::IntTensor;

// A 1 x 32 tensor of unsigned codes packed in words, one group, zero z, scale bits s.
IntTensor one_block(int bits, std::vector<int> codes, int z, uint16_t s = 0x3C00) {
    IntTensor t;
    t.bits = bits;
    t.packed_words = true;
    codes.resize(32, z);
    t.codes = codes;
    t.zeros = {z};
    t.scale_bits = {s};
    return t;
}

std::string type_of(const IntBlockChoice& c) {
    return c.encoding ? ggml_type_name(c.type) : "refused: " + c.refusals.at(0).reason;
}

TEST(IntTypeChoice, SmallestExactTypeTable) {
    // bits <= 3: every q - z in [-7, 7] -> Q4_0, whatever the codes.
    IntTensor three = one_block(3, {0, 7}, 7);
    EXPECT_EQ(type_of(choose_int_block_type(three.view(), false)), "Q4_0");
    // 4-bit, z = 8: q - z in [-8, 7] -> Q4_0.
    IntTensor sym = one_block(4, {0, 15}, 8);
    EXPECT_EQ(type_of(choose_int_block_type(sym.view(), false)), "Q4_0");
    // 4-bit, z = 3, used codes 0..10: q - z in [-3, 7] -> Q4_0 (only the used range counts).
    IntTensor used = one_block(4, {0, 10}, 3);
    EXPECT_EQ(type_of(choose_int_block_type(used.view(), false)), "Q4_0");
    // 4-bit, z = 12, code 0: q - z = -12 -> not Q4_0; s = 0.5, -z*s = -6 is an fp16 -> Q4_1.
    IntTensor q41 = one_block(4, {0, 15}, 12, 0x3800);
    const IntBlockChoice c41 = choose_int_block_type(q41.view(), false);
    EXPECT_EQ(type_of(c41), "Q4_1");
    EXPECT_EQ(c41.encoding, Encoding::q4_1_int);
    // Same codes, s = 1 + 2^-10 (0x3C01): 12 * s = 12.01171875 needs 14 significant bits -> Q5_0.
    IntTensor q50 = one_block(4, {0, 15}, 12, 0x3C01);
    const IntBlockChoice c50 = choose_int_block_type(q50.view(), false);
    EXPECT_EQ(type_of(c50), "Q5_0");
    EXPECT_NE(c50.note.find("q - z in [-12, 3]"), std::string::npos) << c50.note;
    // A negative scale rules Q4_1 out (q*d + m would give +0 where (q - z)*s is -0) -> Q5_0.
    IntTensor negative = one_block(4, {0, 15}, 12, 0xB800);
    EXPECT_EQ(type_of(choose_int_block_type(negative.view(), false)), "Q5_0");
    // 5-bit, z = 16: q - z in [-16, 15] -> Q5_0; z = 20 with code 0 -> -20: Q5_1 when -z*s is an
    // fp16 (s = 1), else Q8_0 (s = 1 + 2^-10: 20 * s needs 15 significant bits).
    IntTensor five = one_block(5, {0, 31}, 16);
    EXPECT_EQ(type_of(choose_int_block_type(five.view(), false)), "Q5_0");
    IntTensor five_asym = one_block(5, {0, 31}, 20);
    EXPECT_EQ(type_of(choose_int_block_type(five_asym.view(), false)), "Q5_1");
    IntTensor five_inexact = one_block(5, {0, 31}, 20, 0x3C01);
    EXPECT_EQ(type_of(choose_int_block_type(five_inexact.view(), false)), "Q8_0");
    // 8-bit: z = 128 -> [-128, 127] -> Q8_0; z = 100 with code 255 -> 155: no type holds it.
    IntTensor eight = one_block(8, {0, 255}, 128);
    eight.zeros.clear();  // 128 is no signed byte: a constant zero point
    eight.zero_constant = 128;
    EXPECT_EQ(type_of(choose_int_block_type(eight.view(), false)), "Q8_0");
    IntTensor eight_far = one_block(8, {0, 255}, 100);
    const IntBlockChoice far = choose_int_block_type(eight_far.view(), false);
    EXPECT_FALSE(far.encoding);
    EXPECT_NE(type_of(far).find("[-100, 155]"), std::string::npos) << type_of(far);
}

TEST(IntTypeChoice, OuttypeQ4_1OnlyWhereExact) {
    IntTensor sym = one_block(4, {0, 15}, 8);  // 8 * 1.0 exact
    EXPECT_EQ(type_of(choose_int_block_type(sym.view(), true)), "Q4_1");
    IntTensor inexact = one_block(4, {0, 15}, 12, 0x3C01);
    EXPECT_NE(type_of(choose_int_block_type(inexact.view(), true)).find("--outtype q4_1"),
              std::string::npos);
}

TEST(IntTypeChoice, GroupsMustNotCrossBlocks) {
    IntTensor g48;
    g48.cols = 96;
    g48.group = 48;
    g48.codes.assign(96, 0);
    g48.scale_bits = {0x3C00, 0x3C00};
    g48.zero_constant = 8;
    g48.packed_words = true;
    EXPECT_NE(type_of(choose_int_block_type(g48.view(), false)).find("group 48"),
              std::string::npos);
    // One group per row (channel-wise) of 64 columns is fine.
    IntTensor channel = g48;
    channel.cols = 64;
    channel.group = 64;
    channel.codes.assign(64, 0);
    channel.scale_bits = {0x3C00};
    EXPECT_EQ(type_of(choose_int_block_type(channel.view(), false)), "Q4_0");
    // cols % 32 != 0.
    IntTensor narrow = channel;
    narrow.cols = 48;
    narrow.group = 48;
    narrow.codes.assign(48, 0);
    EXPECT_NE(type_of(choose_int_block_type(narrow.view(), false)).find("cols 48"),
              std::string::npos);
}

TEST(IntTypeChoice, GIdxDecidesByItsValues) {
    IntTensor t;
    t.cols = 64;
    t.group = 32;
    t.codes.assign(64, 8);
    t.zero_constant = 8;
    t.packed_words = true;
    t.scale_bits = {0x3C00, 0x4000};
    // Blocks swapped between groups: each 32-value block still has one group -> exact.
    for (int k = 0; k < 64; ++k) t.g_idx.push_back(k < 32 ? 1 : 0);
    EXPECT_EQ(type_of(choose_int_block_type(t.view(), false)), "Q4_0");
    // True act-order: columns of one block in two groups -> refused, naming the columns.
    for (int k = 0; k < 64; ++k) t.g_idx[k] = k % 2;
    const std::string why = type_of(choose_int_block_type(t.view(), false));
    EXPECT_NE(why.find("act-order"), std::string::npos) << why;
    EXPECT_NE(why.find("column 1 in group 1"), std::string::npos) << why;
}

TEST(IntTypeChoice, Bf16ScalesMustBeFp16ValuesWhereTheyMatter) {
    IntTensor ok = one_block(4, {0, 15}, 8, 0x3C00);  // bf16 1.0
    ok.scale_dtype = FloatDtype::BF16;
    EXPECT_EQ(type_of(choose_int_block_type(ok.view(), false)), "Q4_0");
    IntTensor tiny = one_block(4, {0, 15}, 8, 0x33D7);  // bf16 ~1e-7: not an fp16 value
    tiny.scale_dtype = FloatDtype::BF16;
    const std::string why = type_of(choose_int_block_type(tiny.view(), false));
    EXPECT_NE(why.find("not exactly representable as fp16"), std::string::npos) << why;
    // The same scale over a block whose q - z are all 0: its values are 0 * s, carried with d = 0.
    IntTensor zero_block = one_block(4, {}, 8, 0x33D7);
    zero_block.scale_dtype = FloatDtype::BF16;
    const IntBlockChoice c = choose_int_block_type(zero_block.view(), false);
    EXPECT_EQ(type_of(c), "Q4_0");
    EXPECT_TRUE(c.zero_blocks_get_zero_scale);
}

}  // namespace
}  // namespace rebox
