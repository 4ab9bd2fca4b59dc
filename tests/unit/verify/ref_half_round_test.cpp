// verify's own binary32 -> binary16 rounding (verify/quantized/ref_half_round.hpp): hand-worked IEEE cases
// (ties to even, subnormals, overflow, NaN), then ~1M bit patterns spread over all 2^32 against
// llama.cpp's ggml_fp32_to_fp16_row (prebuilt libggml-base.so).
#include "verify/quantized/ref_half_round.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

TEST(VerifyHalfRound, HandValues) {
    struct Case {
        uint32_t float_bits;
        uint16_t half;
        const char* what;
    };
    for (const Case& c : {
             Case{0x00000000, 0x0000, "+0"},
             Case{0x80000000, 0x8000, "-0"},
             Case{0x3f800000, 0x3c00, "1.0"},
             Case{0x3f801000, 0x3c00, "1 + 2^-11, a tie, rounds to the even 1.0"},
             Case{0x3f803000, 0x3c02, "1 + 3*2^-11, a tie, rounds up to the even 1 + 2^-9"},
             Case{0x3f801001, 0x3c01, "just above the tie rounds up"},
             Case{0x477fe000, 0x7bff, "65504, the largest half"},
             Case{0x477fefff, 0x7bff, "just below 65520 stays finite"},
             Case{0x477ff000, 0x7c00, "65520 rounds to infinity"},
             Case{0x7f800000, 0x7c00, "+inf"},
             Case{0xff800000, 0xfc00, "-inf"},
             Case{0x7fc00001, 0x7e00, "NaN payload dropped"},
             Case{0xffa00000, 0xfe00, "negative NaN"},
             Case{0x38800000, 0x0400, "2^-14, the smallest normal"},
             Case{0x387fc000, 0x03ff, "1023*2^-24, the largest subnormal"},
             Case{0x33800000, 0x0001, "2^-24, the smallest subnormal"},
             Case{0x33000000, 0x0000, "2^-25, a tie, rounds to the even zero"},
             Case{0x33000001, 0x0001, "just above 2^-25 rounds up"},
             Case{0x33c00000, 0x0002, "1.5*2^-24, a tie, rounds to the even 2"},
             Case{0x387fe000, 0x0400, "1023.5*2^-24 rounds up into the normals"},
         }) {
        EXPECT_EQ(float_to_half_bits(float_from_bits(c.float_bits)), c.half) << c.what;
    }
}

TEST(VerifyHalfRound, EqualsGgmlOnSpreadBitPatterns) {
    REBOX_REQUIRE_GGML_ORACLE();
    const test::GgmlOracle& oracle = test::GgmlOracle::instance();
    std::vector<float> inputs;
    for (uint64_t bits = 0; bits < (1ull << 32); bits += 4093)
        inputs.push_back(float_from_bits(static_cast<uint32_t>(bits)));
    std::vector<uint16_t> theirs(inputs.size());
    oracle.fp32_to_fp16(inputs.data(), theirs.data(), static_cast<int64_t>(inputs.size()));
    uint64_t differing = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const uint16_t mine = float_to_half_bits(inputs[i]);
        if (mine != theirs[i] && ++differing <= 3) {
            uint32_t bits;
            std::memcpy(&bits, &inputs[i], sizeof bits);
            ADD_FAILURE() << std::hex << "float bits 0x" << bits << ": verify 0x" << mine
                          << ", ggml 0x" << theirs[i];
        }
    }
    EXPECT_EQ(differing, 0u) << "of " << inputs.size();
}

}  // namespace
}  // namespace rebox::verify_ref
