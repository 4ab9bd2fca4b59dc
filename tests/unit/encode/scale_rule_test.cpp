// The kernels' side of non-fp16 scales: a BF16/F32 scale that is exact in fp16 is carried as its
// fp16 bits; one that is not becomes +-0 only under ScaleRule::zero_when_codes_zero in a group
// whose codes are all 0 (values 0*d+m unchanged, sign of zero included), and throws otherwise;
// dequantize_f16 stores the binary32 values as fp16 and refuses a value fp16 cannot hold. Expected
// bytes are worked by hand from IEEE binary16/bfloat16 layouts.
#include <gtest/gtest.h>

#include <bit>
#include <vector>

#include "encode/bit_packer.hpp"
#include "encode/block_encode.hpp"
#include "quant_test_bytes.hpp"
#include "rebox/error.hpp"
#include "source/source_values.hpp"

namespace rebox {
namespace {

using test::u16_le;

QuantView bf16_view(int bits, int64_t group, const std::vector<uint8_t>& stream,
                    const std::vector<uint8_t>& scales, const std::vector<uint8_t>& mins) {
    return test::quant_view(bits, group, stream, FloatDtype::BF16, scales, mins);
}

// Reference value of ggml's Q4_1 dequantization: float(code) * fp16(d) + fp16(m); with d/m as
// bit patterns from the block, computed here with plain C++ float conversions of known values.
uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

TEST(ScaleRule, Bf16ScaleExactInFp16IsCarried) {
    // bf16 0x3f81 = 2^0 * (1 + 1/128) = 1.0078125; fp16: exponent 15 (0x3c00), mantissa
    // 1/128 * 1024 = 8 -> 0x3c08. bf16 0xbf80 = -1.0 -> fp16 0xbc00.
    const std::vector<uint8_t> stream = test::pack_lsb0_bitwise(std::vector<uint8_t>(32, 1), 4);
    const auto scales = u16_le({0x3f81}), mins = u16_le({0xbf80});
    const QuantView q = bf16_view(4, 32, stream, scales, mins);
    EXPECT_EQ(group_scale_half(q, 0), 0x3c08);
    EXPECT_EQ(group_min_half(q, 0), 0xbc00);
    std::vector<uint8_t> out(kQ4_1BlockBytes);
    encode_q4_1(q, 0, 1, out.data());
    EXPECT_EQ(out[0], 0x08);
    EXPECT_EQ(out[1], 0x3c);
    EXPECT_EQ(out[2], 0x00);
    EXPECT_EQ(out[3], 0xbc);
    EXPECT_EQ(out[4], 0x11);  // codes 1 | 1 << 4
}

TEST(ScaleRule, InexactScaleInAllZeroGroupBecomesSignedZero) {
    // Group 0: all codes 0, scale bf16 0x33d7 (1e-7 rounded: (1 + 87/128) * 2^-24, not a multiple
    // of fp16's 2^-24 step), min 1.0. Group 1: all codes 0, scale -that (0xb3d7), min -0.0.
    // Group 2: codes 1, scale 0x33d7 -> not all zero: must throw.
    std::vector<uint8_t> codes(96, 0);
    for (int i = 64; i < 96; ++i) codes[i] = 1;
    const std::vector<uint8_t> stream = test::pack_lsb0_bitwise(codes, 4);
    const auto scales = u16_le({0x33d7, 0xb3d7, 0x33d7}), mins = u16_le({0x3f80, 0x8000, 0x0000});
    const QuantView q = bf16_view(4, 32, stream, scales, mins);
    EXPECT_TRUE(group_codes_all_zero(q, 0));
    EXPECT_TRUE(group_codes_all_zero(q, 1));
    EXPECT_FALSE(group_codes_all_zero(q, 2));
    EXPECT_THROW(group_scale_half(q, 0), Error);  // ScaleRule::exact
    EXPECT_EQ(group_scale_half(q, 0, ScaleRule::zero_when_codes_zero), 0x0000);
    EXPECT_EQ(group_scale_half(q, 1, ScaleRule::zero_when_codes_zero), 0x8000);
    EXPECT_THROW(group_scale_half(q, 2, ScaleRule::zero_when_codes_zero), Error);

    std::vector<uint8_t> out(2 * kQ4_1BlockBytes);
    encode_q4_1(q, 0, 2, out.data(), ScaleRule::zero_when_codes_zero);
    EXPECT_EQ(out[0] | out[1] << 8, 0x0000);
    EXPECT_EQ(out[2] | out[3] << 8, 0x3c00);  // min 1.0
    EXPECT_EQ(out[20] | out[21] << 8, 0x8000);
    EXPECT_EQ(out[22] | out[23] << 8, 0x8000);  // min -0.0
    // Values: source 0 * scale + min vs block 0 * d + m, bit for bit (sign of zero included).
    std::vector<float> source(64);
    dequantize_f32(q, 0, 64, source.data());
    for (int i = 0; i < 32; ++i) {
        EXPECT_EQ(bits_of(source[i]), bits_of(0.0f * 0.0f + 1.0f));
        EXPECT_EQ(bits_of(source[32 + i]), 0x80000000u) << "0 * -1e-7 + -0 = -0";
        EXPECT_EQ(bits_of(0.0f * -0.0f + -0.0f), 0x80000000u);  // what the d = -0 block gives
    }
    EXPECT_THROW(encode_q4_1(q, 2, 1, out.data(), ScaleRule::zero_when_codes_zero), Error);
}

TEST(ScaleRule, NonFiniteScaleIsNeverZeroed) {
    // bf16 NaN 0x7fc0 in an all-zero group: 0 * NaN is NaN, so d = 0 would change the values.
    const std::vector<uint8_t> stream(16, 0);
    const auto scales = u16_le({0x7fc0}), mins = u16_le({0x0000});
    const QuantView q = bf16_view(4, 32, stream, scales, mins);
    EXPECT_THROW(group_scale_half(q, 0, ScaleRule::zero_when_codes_zero), Error);
}

TEST(DequantizeF16, SixBitValuesExactInFp16) {
    // 6-bit codes c = 0..63, scale 2^-10 (fp16 0x1400), min 0.5 (0x3800): value 0.5 + c/1024 lies
    // in [0.5, 1) where fp16 has exponent 14 (0x3800) and a step of 2^-11, so its bits are
    // 0x3800 + 2c.
    std::vector<uint8_t> codes(64);
    for (int c = 0; c < 64; ++c) codes[c] = static_cast<uint8_t>(c);
    const std::vector<uint8_t> stream = test::pack_lsb0_bitwise(codes, 6);
    const auto scales = u16_le({0x1400}), mins = u16_le({0x3800});
    QuantView q = bf16_view(6, 64, stream, scales, mins);
    q.scale_dtype = FloatDtype::F16;
    std::vector<uint16_t> out(64, 0xFFFF);
    dequantize_f16(q, 0, 64, out.data());
    for (int c = 0; c < 64; ++c) EXPECT_EQ(out[c], 0x3800 + 2 * c) << c;
    // From the middle: values 10..19.
    std::vector<uint16_t> part(10);
    dequantize_f16(q, 10, 10, part.data());
    EXPECT_EQ(part[0], 0x3800 + 20);
    EXPECT_EQ(part[9], 0x3800 + 38);
}

TEST(DequantizeF16, ValueNotExactInFp16Throws) {
    // Scale fp16 0x2e66 (0.0999755859375 = 1638 * 2^-14), min 0.5, code 1: 0.5999755859375 is
    // not a multiple of 2^-11 (1638 / 8 is not whole), so no fp16 holds it.
    std::vector<uint8_t> codes(64, 0);
    codes[5] = 1;
    const std::vector<uint8_t> stream = test::pack_lsb0_bitwise(codes, 6);
    const auto scales = u16_le({0x2e66}), mins = u16_le({0x3800});
    QuantView q = bf16_view(6, 64, stream, scales, mins);
    q.scale_dtype = FloatDtype::F16;
    std::vector<uint16_t> out(64);
    dequantize_f16(q, 0, 5, out.data());  // codes 0: all 0.5
    EXPECT_EQ(out[4], 0x3800);
    EXPECT_THROW(dequantize_f16(q, 0, 64, out.data()), Error);
}

}  // namespace
}  // namespace rebox
