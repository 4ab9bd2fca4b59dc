// verify's lossy-type dequantizers (verify/quantized/ref_dequant_lossy.hpp) against llama.cpp's
// dequantize_row_* from the prebuilt libggml-base.so: the blocks ggml_quantize_chunk writes for
// generated and adversarial data, and blocks of random bytes (every bit pattern a file may hold),
// decode to the same binary32 bits.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "verify/quant_oracle_data.hpp"
#include "verify/quantized/ref_dequant_lossy.hpp"
#include "verify/quantized/ref_quantize.hpp"

namespace rebox::verify_ref {
namespace {

class RefDequantLossyOracle : public ::testing::TestWithParam<uint32_t> {};

void expect_same_values(uint32_t type, const std::vector<uint8_t>& blocks, const char* what) {
    RefQuantLayout layout{};
    ASSERT_TRUE(ref_quant_layout(type, &layout));
    const size_t count = blocks.size() / layout.block_bytes;
    std::vector<float> theirs(count * layout.block_values), mine(layout.block_values);
    ASSERT_TRUE(test::GgmlOracle::instance().dequantize(type, blocks.data(), theirs.data(),
                                                        static_cast<int64_t>(theirs.size())));
    uint64_t differing = 0;
    for (size_t b = 0; b < count; ++b) {
        ASSERT_TRUE(
            dequantize_lossy_block(type, blocks.data() + b * layout.block_bytes, mine.data()));
        for (uint32_t j = 0; j < layout.block_values; ++j) {
            const float t = theirs[b * layout.block_values + j];
            if (std::memcmp(&mine[j], &t, sizeof t) != 0 && ++differing <= 3)
                ADD_FAILURE() << "type " << type << ", " << what << ": block " << b << " value "
                              << j << ": verify " << mine[j] << ", ggml " << t;
        }
    }
    EXPECT_EQ(differing, 0u);
}

TEST_P(RefDequantLossyOracle, ValuesEqualGgml) {
    const uint32_t type = GetParam();
    REBOX_REQUIRE_GGML_ORACLE();
    const test::GgmlOracle& oracle = test::GgmlOracle::instance();
    RefQuantLayout layout{};
    ASSERT_TRUE(ref_quant_layout(type, &layout));
    for (const auto& m : test::quant_oracle_matrices(layout.block_values, false, 100'000, 7)) {
        expect_same_values(type,
                           oracle.quantize_rows(type, m.values.data(), m.rows, m.width, nullptr),
                           m.what.c_str());
    }
    std::mt19937_64 rng(type);
    std::vector<uint8_t> random_blocks(256 * layout.block_bytes);
    for (auto& byte : random_blocks) byte = static_cast<uint8_t>(rng());
    expect_same_values(type, random_blocks, "random bytes");
}

INSTANTIATE_TEST_SUITE_P(AllTypes, RefDequantLossyOracle,
                         ::testing::Values(2u, 3u, 6u, 7u, 8u, 10u, 11u, 12u, 13u, 14u, 20u, 23u,
                                           39u, 40u, 34u, 35u, 41u, 42u),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                             return "type" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace rebox::verify_ref
