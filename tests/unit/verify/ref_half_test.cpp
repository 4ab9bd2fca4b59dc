// verify's own fp16/bf16 widening on hand-picked bit patterns (IEEE 754 binary16 by hand).
#include "verify/values/ref_half.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace rebox::verify_ref {
namespace {

TEST(VerifyHalf, HandValues) {
    struct Case {
        uint16_t half;
        uint32_t float_bits_expected;
        const char* what;
    };
    for (const Case& c : {
             Case{0x0000, 0x00000000, "+0"},
             Case{0x8000, 0x80000000, "-0 keeps its sign"},
             Case{0x0001, 0x33800000, "smallest subnormal 2^-24"},
             Case{0x8001, 0xB3800000, "-2^-24"},
             Case{0x03ff, 0x387FC000, "largest subnormal 1023*2^-24"},
             Case{0x0400, 0x38800000, "smallest normal 2^-14"},
             Case{0x3c00, 0x3F800000, "1.0"},
             Case{0xbc00, 0xBF800000, "-1.0"},
             Case{0x3800, 0x3F000000, "0.5"},
             Case{0x7bff, 0x477FE000, "65504, largest finite"},
             Case{0xfbff, 0xC77FE000, "-65504"},
             Case{0x7c00, 0x7F800000, "+inf"},
             Case{0xfc00, 0xFF800000, "-inf"},
         }) {
        EXPECT_EQ(float_bits(half_bits_to_float(c.half)), c.float_bits_expected) << c.what;
    }
    EXPECT_TRUE(std::isnan(half_bits_to_float(0x7e00)));
    EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(half_bits_to_float(0x7bff), 65504.0f);
}

TEST(VerifyHalf, Bf16IsTheUpperHalf) {
    EXPECT_EQ(bf16_bits_to_float(0x3f80), 1.0f);
    EXPECT_EQ(float_bits(bf16_bits_to_float(0x8000)), 0x80000000u);
    EXPECT_EQ(bf16_bits_to_float(0xc040), -3.0f);
}

}  // namespace
}  // namespace rebox::verify_ref
