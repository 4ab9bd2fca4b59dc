// verify's MLX parameter widening: expected_from_quantized with BF16 and F32 scales/biases (the
// QuantView param_dtype), values worked out by hand in IEEE binary32.
#include <gtest/gtest.h>

#include <vector>

#include "verify/values/ref_expected.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

TEST(VerifyMlxExpected, Bf16ParametersWidenAsUpperHalfOfBinary32) {
    // 4-bit codes 3 and 10 (byte 0xA3), one group of 2. scale bf16 0xBF00 = -0.5, bias bf16
    // 0x40A0 = 5.0: 3*-0.5+5 = 3.5 (0x40600000), 10*-0.5+5 = 0 (+0).
    const std::vector<uint8_t> codes = {0xA3};
    const std::vector<uint8_t> scales = {0x00, 0xBF}, biases = {0xA0, 0x40};
    QuantView source{codes, scales, biases, 4, 2, SourceFloat::BF16};
    std::vector<uint8_t> scratch(2);
    std::vector<float> out(2);
    expected_from_quantized(source, 0, scratch, out);
    EXPECT_EQ(float_bits(out[0]), 0x40600000u);
    EXPECT_EQ(float_bits(out[1]), 0x00000000u);
}

TEST(VerifyMlxExpected, F32ParametersAreReadAsBinary32) {
    // 8-bit code 2, scale f32 0x3F400000 = 0.75, bias f32 0xBF800000 = -1: 2*0.75-1 = 0.5.
    const std::vector<uint8_t> codes = {0x02};
    const std::vector<uint8_t> scales = {0x00, 0x00, 0x40, 0x3F}, biases = {0x00, 0x00, 0x80, 0xBF};
    QuantView source{codes, scales, biases, 8, 1, SourceFloat::F32};
    std::vector<uint8_t> scratch(1);
    std::vector<float> out(1);
    expected_from_quantized(source, 0, scratch, out);
    EXPECT_EQ(float_bits(out[0]), 0x3F000000u);
}

}  // namespace
}  // namespace rebox::verify_ref
