// mcq_padding_is_zero: bits after the last code up to the byte boundary (and any byte beyond) must
// be zero; streams built by hand from the spec's lsb0 layout.
#include <gtest/gtest.h>

#include <vector>

#include "source/mcq_reader.hpp"

namespace rebox {
namespace {

TEST(McqPadding, SpecVectorHasZeroPadding) {
    // bits 3, codes 5, 2, 7 -> 0xD5 0x01: 9 bits used, bits 9..15 zero.
    const std::vector<uint8_t> stream = {0xD5, 0x01};
    EXPECT_TRUE(mcq_padding_is_zero(stream, 3, 3));
}

TEST(McqPadding, EachPaddingBitIsChecked) {
    for (int bit = 1; bit < 8; ++bit) {  // bits 9..15 of the stream = bits 1..7 of byte 1
        const std::vector<uint8_t> stream = {0xD5, static_cast<uint8_t>(0x01 | (1u << bit))};
        EXPECT_FALSE(mcq_padding_is_zero(stream, 3, 3)) << "padding bit " << bit;
    }
}

TEST(McqPadding, WholeBytesAndTrailingBytes) {
    const std::vector<uint8_t> full = {0xFF, 0xFF};  // 4 codes of 4 bits: no padding bits at all
    EXPECT_TRUE(mcq_padding_is_zero(full, 4, 4));
    const std::vector<uint8_t> extra = {0xFF, 0xFF, 0x00, 0x10};  // bytes beyond the codes
    EXPECT_FALSE(mcq_padding_is_zero(extra, 4, 4));
    const std::vector<uint8_t> short_stream = {0xFF};  // too short to hold 3 codes of 3 bits
    EXPECT_FALSE(mcq_padding_is_zero(short_stream, 3, 3));
}

}  // namespace
}  // namespace rebox
