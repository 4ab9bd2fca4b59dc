// binary16/bfloat16 conversions against hand-worked bit patterns, an independent formula for every
// half value, and GCC's _Float16 (libgcc soft-fp, round-to-nearest-even) as an outside reference.
#include "format/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace rebox {
namespace {

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

// Value of a binary16 pattern from the IEEE 754 definition, evaluated in double.
double half_value_by_definition(uint16_t h) {
    const int sign = (h & 0x8000) ? -1 : 1;
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    if (exponent == 0) return sign * std::ldexp(static_cast<double>(mantissa), -24);
    if (exponent == 31) return mantissa == 0 ? sign * INFINITY : NAN;
    return sign * std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
}

// _Float16 exists where the compiler defines __FLT16_MANT_DIG__ (GCC 12 on x86-64; not clang 14,
// which the sanitizer build uses: there the comparison is skipped).
#ifdef __FLT16_MANT_DIG__
uint16_t gcc_float_to_half(float f) {
    volatile float in = f;
    const _Float16 h = static_cast<_Float16>(in);
    uint16_t out;
    std::memcpy(&out, &h, sizeof out);
    return out;
}
#endif

TEST(Half, EveryHalfWidensToItsDefinedValueAndRoundTrips) {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const auto pattern = static_cast<uint16_t>(h);
        const float wide = half_to_float(pattern);
        const double expected = half_value_by_definition(pattern);
        if (std::isnan(expected)) {
            ASSERT_TRUE(std::isnan(wide)) << std::hex << h;
            ASSERT_TRUE(std::isnan(half_to_float(float_to_half(wide)))) << std::hex << h;
            continue;
        }
        ASSERT_EQ(static_cast<double>(wide), expected) << std::hex << h;
        ASSERT_EQ(std::signbit(wide), (h & 0x8000) != 0) << std::hex << h;
        ASSERT_EQ(float_to_half(wide), pattern) << std::hex << h;
        uint16_t exact = 0;
        ASSERT_TRUE(float_to_half_exact(wide, &exact)) << std::hex << h;
        ASSERT_EQ(exact, pattern) << std::hex << h;
    }
}

TEST(Half, HandWorkedPatterns) {
    struct Case {
        uint16_t half;
        float value;
    };
    for (const Case& c :
         {Case{0x3c00, 1.0f}, Case{0xbc00, -1.0f}, Case{0x4000, 2.0f},
          Case{0x3555, 0.333251953125f}, Case{0x0001, 0x1p-24f}, Case{0x03ff, 1023 * 0x1p-24f},
          Case{0x0400, 0x1p-14f}, Case{0x7bff, 65504.0f}, Case{0xfbff, -65504.0f},
          Case{0x0000, 0.0f}, Case{0x7c00, INFINITY}, Case{0xfc00, -INFINITY},
          Case{0x3bff, 1.0f - 0x1p-11f}, Case{0x3c01, 1.0f + 0x1p-10f}}) {
        EXPECT_EQ(bits_of(half_to_float(c.half)), bits_of(c.value)) << std::hex << c.half;
        EXPECT_EQ(float_to_half(c.value), c.half) << std::hex << c.half;
    }
    EXPECT_EQ(bits_of(half_to_float(0x8000)), 0x80000000u);  // -0.0 keeps its sign
    EXPECT_EQ(float_to_half(-0.0f), 0x8000);
    EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
    EXPECT_TRUE(std::isnan(half_to_float(0x7c01)));  // signalling pattern is still NaN
}

TEST(Half, NarrowingRoundsToNearestEven) {
    EXPECT_EQ(float_to_half(1.0f + 0x1p-11f), 0x3c00);             // tie, 1.0 is even: down
    EXPECT_EQ(float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02);         // tie, 1+2^-10 is odd: up
    EXPECT_EQ(float_to_half(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);  // above the tie: up
    EXPECT_EQ(float_to_half(1.0f / 3.0f), 0x3555);
    EXPECT_EQ(float_to_half(0x1p-25f), 0x0000);  // tie between 0 and 2^-24: to even 0
    EXPECT_EQ(float_to_half(-0x1p-25f), 0x8000);
    EXPECT_EQ(float_to_half(0x1p-25f * 1.0000001f), 0x0001);  // just above the tie
    EXPECT_EQ(float_to_half(3 * 0x1p-25f), 0x0002);           // 1.5 ulp: tie to even 2
    EXPECT_EQ(float_to_half(5 * 0x1p-25f), 0x0002);           // 2.5 ulp: tie to even 2 (down)
    EXPECT_EQ(float_to_half(1023.5f * 0x1p-24f), 0x0400);     // subnormal carries into the normals
    EXPECT_EQ(float_to_half(0x1p-30f), 0x0000);
}

TEST(Half, OverflowBecomesInfinityAndNanStaysNan) {
    EXPECT_EQ(float_to_half(65519.0f), 0x7bff);  // below the tie at 65520
    EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // tie: 65504 is odd, so up to infinity
    EXPECT_EQ(float_to_half(1e10f), 0x7c00);
    EXPECT_EQ(float_to_half(-1e10f), 0xfc00);
    EXPECT_EQ(float_to_half(INFINITY), 0x7c00);
    const uint16_t nan =
        float_to_half(std::bit_cast<float>(0x7f800001u));  // payload only in low bits
    EXPECT_EQ(nan & 0x7c00, 0x7c00);
    EXPECT_NE(nan & 0x03ff, 0);  // not turned into infinity
    uint16_t out = 0;
    EXPECT_FALSE(float_to_half_exact(NAN, &out));
}

TEST(Half, NarrowingAgreesWithGccFloat16) {
#ifndef __FLT16_MANT_DIG__
    GTEST_SKIP() << "this compiler has no _Float16";
#else
    // A stride through every float pattern plus dense windows at the rounding boundaries.
    auto check = [](uint32_t bits) {
        const float f = std::bit_cast<float>(bits);
        if (std::isnan(f)) return;
        ASSERT_EQ(float_to_half(f), gcc_float_to_half(f)) << std::hex << bits;
    };
    for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4093) check(static_cast<uint32_t>(bits));
    for (uint32_t center : {0x33000000u, 0x38800000u, 0x477ff000u, 0x3f800000u, 0x387fc000u}) {
        for (uint32_t d = 0; d < 20000; ++d) {
            check(center + d - 10000);
            check((center + d - 10000) | 0x80000000u);
        }
    }
#endif
}

TEST(Half, ExactAgreesWithGccFloat16RoundTrip) {
#ifndef __FLT16_MANT_DIG__
    GTEST_SKIP() << "this compiler has no _Float16";
#else
    // Exact means the compiler's own _Float16 narrowing and widening give f back; then the bits
    // are the narrowed value's. Every bfloat16 value widened (the scales MLX and compressed-tensors
    // store), a stride through all float patterns, and windows around each binary16 boundary (the
    // smallest subnormal, the smallest normal, the largest finite, 1.0).
    auto check = [](uint32_t bits) {
        const float f = std::bit_cast<float>(bits);
        uint16_t got = 0x1234;
        const bool exact = float_to_half_exact(f, &got);
        if (std::isnan(f)) {
            ASSERT_FALSE(exact) << std::hex << bits;
            return;
        }
        const auto narrowed = static_cast<_Float16>(f);
        const bool want = std::bit_cast<uint32_t>(static_cast<float>(narrowed)) == bits;
        ASSERT_EQ(exact, want) << std::hex << bits;
        if (want) ASSERT_EQ(got, std::bit_cast<uint16_t>(narrowed)) << std::hex << bits;
    };
    for (uint32_t b = 0; b <= 0xffffu; ++b) check(b << 16);
    for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 8191) check(static_cast<uint32_t>(bits));
    for (uint32_t center : {0x33800000u, 0x38800000u, 0x477fe000u, 0x3f800000u, 0x387fc000u}) {
        for (uint32_t d = 0; d < 20000; ++d) {
            check(center + d - 10000);
            check((center + d - 10000) | 0x80000000u);
        }
    }
#endif
}

TEST(Half, ExactOnlyWhenRepresentable) {
    uint16_t out = 0xffff;
    EXPECT_FALSE(float_to_half_exact(1.0f / 3.0f, &out));
    EXPECT_FALSE(float_to_half_exact(0x1p-25f, &out));
    EXPECT_FALSE(float_to_half_exact(65520.0f, &out));
    EXPECT_FALSE(float_to_half_exact(1.0f + 0x1p-11f, &out));
    EXPECT_TRUE(float_to_half_exact(0x1p-24f, &out));
    EXPECT_EQ(out, 0x0001);
    EXPECT_TRUE(float_to_half_exact(-0.0f, &out));
    EXPECT_EQ(out, 0x8000);
    EXPECT_TRUE(float_to_half_exact(INFINITY, &out));
    EXPECT_EQ(out, 0x7c00);
}

TEST(Bf16, WideningShiftsAndNarrowingMatchesGgml) {
    EXPECT_EQ(bits_of(bf16_to_float(0x3f80)), 0x3f800000u);
    EXPECT_EQ(bits_of(bf16_to_float(0x8000)), 0x80000000u);
    EXPECT_EQ(bits_of(bf16_to_float(0x0001)), 0x00010000u);  // subnormal kept as is
    EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
    // Hand-worked from the ggml rule: bits + 0x7fff + lsb, then >> 16.
    EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even stays
    EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, odd goes up
    EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);  // above tie
    EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f807fffu)), 0x3f80);  // below tie
    EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x7f7fffffu)), 0x7f80);  // max float rounds to inf
    EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x7f800001u)), 0x7fc0);  // NaN forced quiet (| 64)
    EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0xff800000u)), 0xff80);  // -inf unchanged
    for (uint32_t b = 0; b <= 0xffff; ++b) {
        if ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) continue;  // NaN
        ASSERT_EQ(float_to_bf16(bf16_to_float(static_cast<uint16_t>(b))), b) << std::hex << b;
    }
}

}  // namespace
}  // namespace rebox
