// verify's Q4_1 / Q5_1 dequantizers on many random blocks against a per-value reader written here
// straight from the block layout (ggml-common.h) with its own binary16 widening for normal halves.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "verify/values/ref_dequant.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

// A normal binary16 (exponent field 1..30) as a float: (1 + mant/1024) * 2^(exp-15), exact.
float normal_half(uint16_t bits) {
    const int exponent = (bits >> 10) & 0x1f;
    const float magnitude = std::ldexp(static_cast<float>(1024 + (bits & 0x3ff)), exponent - 25);
    return (bits & 0x8000) ? -magnitude : magnitude;
}

uint16_t random_normal_half(std::mt19937& random) {
    const uint16_t exponent = static_cast<uint16_t>(1 + random() % 30);
    return static_cast<uint16_t>((random() & 0x8000) | (exponent << 10) | (random() & 0x3ff));
}

float code_times_d_plus_m(int code, float d, float m) {
    const float product = static_cast<float>(code) * d;
    return product + m;
}

TEST(VerifyDequantBlocks, Q4_1RandomBlocksMatchPerValueReader) {
    std::mt19937 random(7);
    const size_t blocks = 37;
    std::vector<uint8_t> bytes(blocks * 20);
    std::vector<float> want(blocks * 32);
    for (size_t b = 0; b < blocks; ++b) {
        uint8_t* block = bytes.data() + 20 * b;
        const uint16_t d = random_normal_half(random), m = random_normal_half(random);
        block[0] = d & 0xff, block[1] = d >> 8, block[2] = m & 0xff, block[3] = m >> 8;
        for (int j = 0; j < 16; ++j) block[4 + j] = static_cast<uint8_t>(random());
        for (int i = 0; i < 32; ++i) {
            const int code = i < 16 ? (block[4 + i] & 15) : (block[4 + i - 16] >> 4);
            want[32 * b + i] = code_times_d_plus_m(code, normal_half(d), normal_half(m));
        }
    }
    std::vector<float> got(want.size());
    dequantize_q4_1(bytes, got);
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(float_bits(got[i]), float_bits(want[i])) << "value " << i;
}

TEST(VerifyDequantBlocks, Q5_1RandomBlocksMatchPerValueReader) {
    std::mt19937 random(11);
    const size_t blocks = 37;
    std::vector<uint8_t> bytes(blocks * 24);
    std::vector<float> want(blocks * 32);
    for (size_t b = 0; b < blocks; ++b) {
        uint8_t* block = bytes.data() + 24 * b;
        const uint16_t d = random_normal_half(random), m = random_normal_half(random);
        block[0] = d & 0xff, block[1] = d >> 8, block[2] = m & 0xff, block[3] = m >> 8;
        for (int j = 4; j < 24; ++j) block[j] = static_cast<uint8_t>(random());
        for (int i = 0; i < 32; ++i) {
            const int low = i < 16 ? (block[8 + i] & 15) : (block[8 + i - 16] >> 4);
            const int high = (block[4 + i / 8] >> (i % 8)) & 1;  // qh bit i, little-endian
            want[32 * b + i] =
                code_times_d_plus_m(low | (high << 4), normal_half(d), normal_half(m));
        }
    }
    std::vector<float> got(want.size());
    dequantize_q5_1(bytes, got);
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(float_bits(got[i]), float_bits(want[i])) << "value " << i;
}

}  // namespace
}  // namespace rebox::verify_ref
