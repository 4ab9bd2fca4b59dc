// verify's own lsb0 reader against the spec's worked example and hand-worked streams for 1..8 bits.
#include "verify/values/ref_lsb0.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rebox::verify_ref {
namespace {

std::vector<uint8_t> extract(const std::vector<uint8_t>& stream, unsigned bits, uint64_t first,
                             size_t count) {
    std::vector<uint8_t> codes(count);
    extract_lsb0_codes(stream, bits, first, codes);
    return codes;
}

struct HandVector {
    unsigned bits;
    std::vector<uint8_t> stream;
    std::vector<uint8_t> codes;
};

// Each stream worked out by hand: code i at stream bits i*bits.., LSB first, bit k in byte k/8.
const std::vector<HandVector> kHandVectors = {
    {1, {0x8D, 0x01}, {1, 0, 1, 1, 0, 0, 0, 1, 1}},  // 0b10001101, then one code in byte 1
    {2, {0x63}, {3, 0, 2, 1}},                       // 11 | 00 | 01 (=2) | 10 (=1)
    {3, {0xD5, 0x01}, {5, 2, 7}},                    // the spec's example
    {4, {0x3A, 0x0F}, {0xA, 0x3, 0xF}},              // low nibble first
    {5, {0x3F, 0x40}, {31, 1, 16}},                  // 31 | 1<<5 | 16<<10
    {6, {0x6A, 0x05}, {0x2A, 0x15}},                 // 0x2A | 0x15<<6 = 0x56A
    {7, {0x7F, 0x40, 0x10}, {0x7F, 0x00, 0x41}},     // 0x7F | 0x41<<14 = 0x10407F
    {8, {0x12, 0xFE}, {0x12, 0xFE}},                 // bytes are codes
};

TEST(VerifyLsb0, SpecExampleThreeBits) {
    EXPECT_EQ(extract({0xD5, 0x01}, 3, 0, 3), (std::vector<uint8_t>{5, 2, 7}));
}

TEST(VerifyLsb0, HandWorkedVectorsForEveryWidth) {
    for (const HandVector& v : kHandVectors) {
        EXPECT_EQ(extract(v.stream, v.bits, 0, v.codes.size()), v.codes) << "bits " << v.bits;
    }
}

TEST(VerifyLsb0, StartsMidStream) {
    for (const HandVector& v : kHandVectors) {
        for (size_t first = 1; first < v.codes.size(); ++first) {
            const std::vector<uint8_t> tail(v.codes.begin() + first, v.codes.end());
            EXPECT_EQ(extract(v.stream, v.bits, first, tail.size()), tail)
                << "bits " << v.bits << " first " << first;
        }
    }
}

TEST(VerifyLsb0, PaddingBitsMustBeZero) {
    EXPECT_TRUE(lsb0_padding_is_zero(std::vector<uint8_t>{0xD5, 0x01}, 3, 3));
    EXPECT_FALSE(lsb0_padding_is_zero(std::vector<uint8_t>{0xD5, 0x03}, 3, 3));  // bit 9 set
    EXPECT_FALSE(lsb0_padding_is_zero(std::vector<uint8_t>{0xD5, 0x81}, 3, 3));  // bit 15 set
    EXPECT_TRUE(lsb0_padding_is_zero(std::vector<uint8_t>{0xFF}, 4, 2));         // no padding
    EXPECT_FALSE(lsb0_padding_is_zero(std::vector<uint8_t>{0xD5}, 3, 3));        // stream too short
}

}  // namespace
}  // namespace rebox::verify_ref
