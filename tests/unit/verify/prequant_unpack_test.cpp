// verify's GPTQ / AWQ / compressed-tensors unpacking on words worked out by hand from the packing
// descriptions (docs/formats.md §5): 3-bit GPTQ codes crossing int32 words, qzeros along the
// output dimension, AWQ's interleaved nibble order, compressed-tensors' whole-codes-per-word
// packing with its +2^(bits-1) offset, GPTQ's stored z - 1, and g_idx naming each column's group.
#include "verify/sources/prequant_unpack.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "verify/sources/prequant_expected.hpp"
#include "verify/sources/prequant_parts.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

std::vector<uint8_t> words_le(const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes;
    for (uint32_t w : words)
        for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(w >> (8 * b)));
    return bytes;
}

TEST(VerifyPrequantUnpack, Gptq3BitCodesCrossWords) {
    // One column of 32 input values at 3 bits = 96 stream bits = 3 words. Codes set by hand:
    // k0 = 2 (bits 0-2), k10 = 5 = 0b101 at bits 30..32: word0 bits 30,31 = 1,0 and word1 bit 0 =
    // 1; k11 = 7 at bits 33..35 = word1 bits 1..3; k21 = 6 = 0b110 at bits 63..65: word1 bit 31 =
    // 0, word2 bits 0,1 = 1,1; k31 = 3 at bits 93..95 = word2 bits 29..31. word0 = 0x40000002,
    // word1 = 0x0000000F, word2 = 0x60000003. A second column (all ones) interleaves: qweight is
    // [3, 2], row-major.
    const auto qweight =
        words_le({0x40000002, 0xFFFFFFFF, 0x0000000F, 0xFFFFFFFF, 0x60000003, 0xFFFFFFFF});
    std::vector<uint32_t> expected(32, 0);
    expected[0] = 2, expected[10] = 5, expected[11] = 7, expected[21] = 6, expected[31] = 3;
    for (uint64_t k = 0; k < 32; ++k) {
        EXPECT_EQ(gptq_code(qweight, 2, 3, 0, k), expected[k]) << "k " << k;
        EXPECT_EQ(gptq_code(qweight, 2, 3, 1, k), 7u) << "k " << k;
    }
}

TEST(VerifyPrequantUnpack, Gptq4And2And8BitCodesAlongInput) {
    // 4-bit: word 0x76543210 holds k0..k7 = 0..7, LSB first; column 1 word 0x0000000F.
    const auto q4 = words_le({0x76543210, 0x0000000F});
    for (uint64_t k = 0; k < 8; ++k) EXPECT_EQ(gptq_code(q4, 2, 4, 0, k), k);
    EXPECT_EQ(gptq_code(q4, 2, 4, 1, 0), 15u);
    EXPECT_EQ(gptq_code(q4, 2, 4, 1, 1), 0u);
    // 2-bit: 0xE4 = 0b11100100: k0 = 0, k1 = 1, k2 = 2, k3 = 3.
    const auto q2 = words_le({0x000000E4});
    for (uint64_t k = 0; k < 4; ++k) EXPECT_EQ(gptq_code(q2, 1, 2, 0, k), k);
    // 8-bit: bytes of the word, little end first; the second word is the next input row.
    const auto q8 = words_le({0x04030201, 0xFF000080});
    EXPECT_EQ(gptq_code(q8, 1, 8, 0, 0), 1u);
    EXPECT_EQ(gptq_code(q8, 1, 8, 0, 3), 4u);
    EXPECT_EQ(gptq_code(q8, 1, 8, 0, 4), 0x80u);
    EXPECT_EQ(gptq_code(q8, 1, 8, 0, 7), 0xFFu);
}

TEST(VerifyPrequantUnpack, GptqZerosAlongOutputWith3BitCrossing) {
    // qzeros [2 groups, 32*3/32 = 3 words]: group 1's zero of output 10 is 0b011 at bits 30..32:
    // word bits 30,31 = 1,1 and next word bit 0 = 0. Group 0 is all zero.
    const auto qzeros = words_le({0, 0, 0, 0xC0000000, 0x00000000, 0x00000000});
    EXPECT_EQ(gptq_stored_zero(qzeros, 3, 3, 1, 10), 3u);
    EXPECT_EQ(gptq_stored_zero(qzeros, 3, 3, 1, 9), 0u);
    EXPECT_EQ(gptq_stored_zero(qzeros, 3, 3, 1, 11), 0u);
    EXPECT_EQ(gptq_stored_zero(qzeros, 3, 3, 0, 10), 0u);
    // 4-bit: output o's zero is nibble o of the row's words.
    const auto z4 = words_le({0x000000A7});
    EXPECT_EQ(gptq_stored_zero(z4, 1, 4, 0, 0), 7u);
    EXPECT_EQ(gptq_stored_zero(z4, 1, 4, 0, 1), 10u);
}

TEST(VerifyPrequantUnpack, AwqNibbleOrder) {
    // AWQ packs column [0,2,4,6,1,3,5,7][n] into nibble n. With nibble n holding the value n
    // (word 0x76543210), column 1 is in nibble 4, column 2 in nibble 1, ...
    const uint32_t word = 0x76543210;
    const uint32_t column_value[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    for (unsigned c = 0; c < 8; ++c) EXPECT_EQ(awq_nibble(word, c), column_value[c]) << c;
}

TEST(VerifyPrequantUnpack, AwqIsInputMajorAndTransposed) {
    // qweight [in = 2, out/8 = 2]: row k holds outputs 0..15 of input k. Input 1, output 9 is
    // word [1][1] column 1 = nibble 4.
    const auto qweight = words_le({0, 0, 0x11111111, 0x000F0000});
    EXPECT_EQ(awq_value(qweight, 16, 1, 9), 15u);
    EXPECT_EQ(awq_value(qweight, 16, 1, 8), 0u);
    EXPECT_EQ(awq_value(qweight, 16, 1, 3), 1u);
    EXPECT_EQ(awq_value(qweight, 16, 0, 9), 0u);
}

TEST(VerifyPrequantUnpack, CompressedTensorsWholeCodesPerWord) {
    // 3-bit: 10 codes per word, bits 30-31 unused; code 9 is bits 27..29 of word 0, code 10 is
    // bits 0..2 of word 1. Row 0: code 9 = 5, code 10 = 6, bits 30-31 set (must be ignored).
    const auto packed = words_le({0xE8000000, 0x00000006});
    EXPECT_EQ(ct_packed_code(packed, 2, 3, 0, 9), 5u);
    EXPECT_EQ(ct_packed_code(packed, 2, 3, 0, 10), 6u);
    EXPECT_EQ(ct_packed_code(packed, 2, 3, 0, 8), 0u);
    // 4-bit: 8 per word; row 1 starts at word words_per_row.
    const auto p4 = words_le({0, 0x000000B0});
    EXPECT_EQ(ct_packed_code(p4, 1, 4, 1, 1), 11u);
    // Zero points packed along the output dimension: [ceil(out/8), groups = 2]; output 9 of
    // group 1 is nibble 1 of word [1][1].
    const auto zp = words_le({0, 0, 0, 0x00000050});
    EXPECT_EQ(ct_packed_zero(zp, 2, 4, 1, 9), 5u);
    EXPECT_EQ(ct_packed_zero(zp, 2, 4, 0, 9), 0u);
}

TEST(VerifyPrequantExpected, CompressedTensorsOffsetCancelsOrIsTheZero) {
    // 4-bit symmetric: stored 0 is signed -8, stored 15 is +7; scale f16 0x3800 = 0.5.
    // values: (0 - 8) * 0.5 = -4, (15 - 8) * 0.5 = 3.5, (8 - 8) * 0.5 = +0.
    const auto packed = words_le({0x000008F0});
    const std::vector<uint8_t> scale = {0x00, 0x38};
    PrequantSource s;
    s.layout = PrequantLayout::ct_packed;
    s.bits = 4, s.out = 1, s.in = 3, s.group = 3, s.groups = 1, s.weight_words_per_row = 1;
    s.scales_per_row = 1;
    s.weight = packed, s.scales = scale;
    std::vector<float> out(3);
    PrequantInexact inexact;
    expected_from_prequant(s, 0, out, inexact);
    EXPECT_EQ(out[0], -4.0f);
    EXPECT_EQ(out[1], 3.5f);
    EXPECT_EQ(float_bits(out[2]), 0u);
    // With a stored zero point 10 (signed +2): (0 - 10) * 0.5 = -5, (15 - 10) * 0.5 = 2.5.
    const auto zp = words_le({0x0000000A});
    s.zeros = zp;
    expected_from_prequant(s, 0, out, inexact);
    EXPECT_EQ(out[0], -5.0f);
    EXPECT_EQ(out[1], 2.5f);
    EXPECT_EQ(out[2], -1.0f);
    EXPECT_EQ(inexact.index, std::numeric_limits<uint64_t>::max());
}

TEST(VerifyPrequantExpected, GptqStoresZeroMinusOneUnlessV2) {
    // 4-bit, one column, 8 inputs: codes 0..7 (0x76543210), stored zero 7, scale 0x3C00 = 1.
    const auto qweight = words_le({0x76543210});
    const auto qzeros = words_le({0x00000007});
    const std::vector<uint8_t> scale = {0x00, 0x3C};
    PrequantSource s;
    s.layout = PrequantLayout::gptq;
    s.bits = 4, s.out = 1, s.in = 8, s.group = 8, s.groups = 1, s.zero_words_per_row = 1;
    s.weight = qweight, s.zeros = qzeros, s.scales = scale;
    s.zero_add = 1;  // "gptq": z = 7 + 1 = 8
    std::vector<float> out(8);
    PrequantInexact inexact;
    expected_from_prequant(s, 0, out, inexact);
    for (int k = 0; k < 8; ++k) EXPECT_EQ(out[k], static_cast<float>(k - 8)) << k;
    s.zero_add = 0;  // "gptq_v2": z = 7
    expected_from_prequant(s, 0, out, inexact);
    for (int k = 0; k < 8; ++k) EXPECT_EQ(out[k], static_cast<float>(k - 7)) << k;
}

TEST(VerifyPrequantExpected, GIdxValuesNameTheGroup) {
    // 4-bit, one column, 8 inputs, two groups: scales [2, 1] = 1.0 (0x3C00) and 2.0 (0x4000),
    // zeros both 0 (v2). g_idx = [1,1,0,0,1,0,1,0] (act order): value k = code k * scale[g_idx[k]].
    const auto qweight = words_le({0x11111111});  // every code 1
    const auto qzeros = words_le({0, 0});
    const std::vector<uint8_t> scales = {0x00, 0x3C, 0x00, 0x40};
    const auto g_idx = words_le({1, 1, 0, 0, 1, 0, 1, 0});
    PrequantSource s;
    s.layout = PrequantLayout::gptq;
    s.bits = 4, s.out = 1, s.in = 8, s.group = 4, s.groups = 2, s.zero_words_per_row = 1;
    s.weight = qweight, s.zeros = qzeros, s.scales = scales, s.g_idx = g_idx;
    std::vector<float> out(8);
    PrequantInexact inexact;
    expected_from_prequant(s, 0, out, inexact);
    const float expected[8] = {2, 2, 1, 1, 2, 1, 2, 1};
    for (int k = 0; k < 8; ++k) EXPECT_EQ(out[k], expected[k]) << k;
    // Without g_idx the group is k / 4: 1, 1, 1, 1, 2, 2, 2, 2.
    s.g_idx = {};
    expected_from_prequant(s, 0, out, inexact);
    for (int k = 0; k < 8; ++k) EXPECT_EQ(out[k], k < 4 ? 1.0f : 2.0f) << k;
}

TEST(VerifyPrequantExpected, AwqValueAtOutputRowInputColumn) {
    // in = 2, out = 8, group 2 (one group). qweight row 1 (input 1) word 0x00000030: nibble 1 =
    // 3 = column 2. qzeros: nibble 4 (column 1) = 1. scales [1, 8] f16, column 2 = 0.25 (0x3400).
    const auto qweight = words_le({0x00000000, 0x00000030});
    const auto qzeros = words_le({0x00010000});
    std::vector<uint8_t> scales(16, 0);
    scales[4] = 0x00, scales[5] = 0x34;  // column 2
    scales[2] = 0x00, scales[3] = 0x3C;  // column 1 = 1.0
    PrequantSource s;
    s.layout = PrequantLayout::awq_gemm;
    s.bits = 4, s.out = 8, s.in = 2, s.group = 2, s.groups = 1;
    s.weight = qweight, s.zeros = qzeros, s.scales = scales;
    std::vector<float> out(16);
    PrequantInexact inexact;
    expected_from_prequant(s, 0, out, inexact);
    EXPECT_EQ(out[2 * 2 + 1], 0.75f);  // (o=2, k=1): (3 - 0) * 0.25
    EXPECT_EQ(out[2 * 2 + 0], 0.0f);   // (o=2, k=0): 0
    EXPECT_EQ(out[1 * 2 + 0], -1.0f);  // (o=1, k=0): (0 - 1) * 1.0
    EXPECT_EQ(out[1 * 2 + 1], -1.0f);
}

TEST(VerifyPrequantExpected, AwqGemvNaturalOrderAndPaddedZeroWidth) {
    // gemv, in = 16, group 8 (2 groups), out = 2. qweight [2, 2]: row 1 word 1 = 0x000000A0 puts
    // code 10 at nibble 1 = input 9. qzeros [2, W]: row 1 nibble 1 (group 1) = 3. scales [2, 8W]
    // f16: row 1, group 1 = 0.5 (0x3800), at index 1 * 8W + 1.
    const uint64_t w = 1;  // the test's zero width (one word covers 2 groups)
    const auto qweight = words_le({0, 0, 0, 0x000000A0});
    const auto qzeros = words_le({0, 0x00000030});
    std::vector<uint8_t> scales(2 * 8 * w * 2, 0);
    scales[2 * (8 * w + 1)] = 0x00, scales[2 * (8 * w + 1) + 1] = 0x38;
    PrequantSource s;
    s.layout = PrequantLayout::awq_gemv;
    s.bits = 4, s.out = 2, s.in = 16, s.group = 8, s.groups = 2;
    s.zero_words_per_row = w, s.scales_per_row = 8 * w;
    s.weight = qweight, s.zeros = qzeros, s.scales = scales;
    std::vector<float> out(32);
    PrequantInexact inexact;
    expected_from_prequant(s, 0, out, inexact);
    EXPECT_EQ(out[16 + 9], 3.5f);   // (10 - 3) * 0.5
    EXPECT_EQ(out[16 + 8], -1.5f);  // (0 - 3) * 0.5
    EXPECT_EQ(out[16 + 7], 0.0f);   // group 0: scale 0
    EXPECT_EQ(out[9], 0.0f);        // row 0
}

TEST(VerifyPrequantExpected, AwqGemvZeroWidthRule) {
    // AutoAWQ calculate_zeros_width: ceil(in/group/8) words, then a multiple of 4 (group 32) or 2
    // (group 64). in 4096, group 128: 32 groups = 4 words. in 64, group 32: 2 groups = 1 word -> 4.
    // in 128, group 64: 2 groups = 1 word -> 2. in 2560, group 64: 40 groups = 5 words -> 6.
    EXPECT_EQ(awq_gemv_zero_words(4096, 128), 4u);
    EXPECT_EQ(awq_gemv_zero_words(64, 32), 4u);
    EXPECT_EQ(awq_gemv_zero_words(128, 64), 2u);
    EXPECT_EQ(awq_gemv_zero_words(2560, 64), 6u);
}

TEST(VerifyPrequantExpected, CompressedTensorsInt8PerChannel) {
    // weight I8 [2, 2] = {-128, 127, 5, -1}; weight_scale [2, 1] f32 {0.5, 2}; zero I8 {0, 1}.
    const std::vector<uint8_t> weight = {0x80, 0x7F, 0x05, 0xFF};
    const std::vector<uint8_t> scales = {0, 0, 0, 0x3F, 0, 0, 0, 0x40};
    const std::vector<uint8_t> zeros = {0x00, 0x01};
    PrequantSource s;
    s.layout = PrequantLayout::ct_int8;
    s.bits = 8, s.out = 2, s.in = 2, s.group = 2, s.groups = 1, s.scales_per_row = 1;
    s.weight = weight, s.scales = scales, s.zeros = zeros, s.scale_dtype = SourceFloat::F32;
    std::vector<float> out(4);
    PrequantInexact inexact;
    expected_from_prequant(s, 0, out, inexact);
    EXPECT_EQ(out[0], -64.0f);
    EXPECT_EQ(out[1], 63.5f);
    EXPECT_EQ(out[2], 8.0f);   // (5 - 1) * 2
    EXPECT_EQ(out[3], -4.0f);  // (-1 - 1) * 2
}

TEST(VerifyPrequantExpected, ValueThatIsNotBinary32IsReported) {
    // An F32 scale 1 + 2^-23 (0x3F800001) times 3 needs 25 significant bits: not a binary32.
    const std::vector<uint8_t> weight = {0x01, 0x03};
    const std::vector<uint8_t> scales = {0x01, 0x00, 0x80, 0x3F};
    PrequantSource s;
    s.layout = PrequantLayout::ct_int8;
    s.bits = 8, s.out = 1, s.in = 2, s.group = 2, s.groups = 1, s.scales_per_row = 1;
    s.weight = weight, s.scales = scales, s.scale_dtype = SourceFloat::F32;
    std::vector<float> out(2);
    PrequantInexact inexact;
    expected_from_prequant(s, 0, out, inexact);
    EXPECT_EQ(inexact.index, 1u);
    EXPECT_EQ(inexact.value, 3.0 + 3.0 * 0x1p-23);
}

}  // namespace
}  // namespace rebox::verify_ref
