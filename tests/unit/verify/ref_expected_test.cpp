// The source-side formula w = float(c)*float(scale)+float(min) on the exactness corner cases, with
// results worked out by hand (IEEE binary32, round to nearest even), and the bit-pattern
// comparison.
#include "verify/values/ref_expected.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "verify/values/ref_compare.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

uint32_t mcq_bits(uint8_t code, uint16_t scale_half, uint16_t min_half) {
    return float_bits(
        mcq_value(code, half_bits_to_float(scale_half), half_bits_to_float(min_half)));
}

TEST(VerifyExpected, ExactnessCorners) {
    // fp16 subnormal scale 2^-24: 7 * 2^-24 = 1.75 * 2^-22 -> exponent 105, mantissa 0.75.
    EXPECT_EQ(mcq_bits(7, 0x0001, 0x0000), 0x34E00000u);
    // Negative-zero min: 0*1 + (-0) = +0 in round-to-nearest.
    EXPECT_EQ(mcq_bits(0, 0x3C00, 0x8000), 0x00000000u);
    // Negative-zero scale and min: (0 * -0) + (-0) = -0 + -0 = -0.
    EXPECT_EQ(mcq_bits(0, 0x8000, 0x8000), 0x80000000u);
    // Negative scale: 3 * -0.5 + 1 = -0.5.
    EXPECT_EQ(mcq_bits(3, 0xB800, 0x3C00), 0xBF000000u);
    // Largest finite fp16: 15*65504 - 65504 = 917056; 15*65504 + 65504 = 1048064.
    EXPECT_EQ(mcq_bits(15, 0x7bff, 0xfbff), 0x495FE400u);
    EXPECT_EQ(mcq_bits(15, 0x7bff, 0x7bff), 0x497FE000u);
    // One rounding in the add: 1 + 2^-24 is a tie between 1 and 1+2^-23 -> even -> 1.0.
    EXPECT_EQ(mcq_bits(1, 0x3C00, 0x0001), 0x3F800000u);
    // Constant group (scale 0): every code gives min.
    for (uint8_t code : {0, 3, 7, 15}) EXPECT_EQ(mcq_bits(code, 0x0000, 0x3C00), 0x3F800000u);
}

TEST(VerifyExpected, QuantizedGroupsAcrossAChunk) {
    // bits 3, codes 5,2,7,1 -> stream 0xD5, 0x03 (by hand); group 2.
    const std::vector<uint8_t> stream = {0xD5, 0x03};
    const std::vector<uint8_t> scales = {0x00, 0x3C, 0x00, 0x40};  // 1.0, 2.0
    const std::vector<uint8_t> mins = {0x00, 0x38, 0x00, 0xBC};    // 0.5, -1.0
    QuantView source{stream, scales, mins, 3, 2};
    std::vector<uint8_t> codes(4);
    std::vector<float> out(4);
    expected_from_quantized(source, 0, codes, out);
    EXPECT_EQ(out, (std::vector<float>{5.5f, 2.5f, 13.0f, 1.0f}));
    std::vector<float> tail(3);
    expected_from_quantized(source, 1, codes, tail);
    EXPECT_EQ(tail, (std::vector<float>{2.5f, 13.0f, 1.0f}));
}

TEST(VerifyExpected, FloatSourcesWiden) {
    const std::vector<uint8_t> f16 = {0x01, 0x00, 0xff, 0x7b};
    std::vector<float> out(2);
    expected_from_float(SourceFloat::F16, f16, 0, out);
    EXPECT_EQ(out[0], std::ldexp(1.0f, -24));
    EXPECT_EQ(out[1], 65504.0f);
    const std::vector<uint8_t> bf16 = {0x80, 0x3f, 0x40, 0xc0};
    expected_from_float(SourceFloat::BF16, bf16, 0, out);
    EXPECT_EQ(out, (std::vector<float>{1.0f, -3.0f}));
}

TEST(VerifyCompare, BitsDecideNotFloatEquality) {
    const std::vector<float> expected = {1.0f, 0.0f, 2.0f, 3.0f};
    const std::vector<float> got = {1.0f, -0.0f, 2.0f, 3.5f};
    CompareResult result;
    compare_values(expected, got, 100, result);
    EXPECT_EQ(result.mismatches, 2u);
    EXPECT_EQ(result.first_diff, 101u);
    EXPECT_EQ(result.expected_bits, 0x00000000u);
    EXPECT_EQ(result.got_bits, 0x80000000u);
    EXPECT_EQ(result.max_abs_error, 0.5);

    CompareResult earlier;
    const std::vector<float> a = {4.0f}, b = {std::nextafter(4.0f, 5.0f)};
    compare_values(a, b, 7, earlier);
    result.merge(earlier);
    EXPECT_EQ(result.mismatches, 3u);
    EXPECT_EQ(result.first_diff, 7u);
    EXPECT_EQ(result.expected_bits, 0x40800000u);
    EXPECT_EQ(result.got_bits, 0x40800001u);
    EXPECT_EQ(result.max_abs_error, 0.5);
}

}  // namespace
}  // namespace rebox::verify_ref
