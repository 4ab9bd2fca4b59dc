// rebox::dequantize_row against ggml's dequantize_row_<type> (and ggml_fp16/bf16_to_fp32_row)
// from the prebuilt libggml-base.so: the same float bits, value for value (+0 and -0 differ, NaN
// payloads count), on random block bytes and on blocks ggml itself quantized.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <vector>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "quant_test_data.hpp"
#include "rebox/rebox.hpp"

namespace rebox {
namespace {

using test::GgmlOracle;

const GgmlType kTypes[] = {GgmlType::Q4_0,  GgmlType::Q4_1,  GgmlType::Q5_0,   GgmlType::Q5_1,
                           GgmlType::Q8_0,  GgmlType::Q2_K,  GgmlType::Q3_K,   GgmlType::Q4_K,
                           GgmlType::Q5_K,  GgmlType::Q6_K,  GgmlType::IQ4_NL, GgmlType::IQ4_XS,
                           GgmlType::MXFP4, GgmlType::NVFP4, GgmlType::F16,    GgmlType::BF16,
                           GgmlType::TQ1_0, GgmlType::TQ2_0, GgmlType::Q1_0,   GgmlType::Q2_0};

// Dequantizes `blocks` with both and expects the same bits at every index.
void expect_same_floats(GgmlType type, const std::vector<uint8_t>& blocks, int64_t n,
                        const char* what) {
    const auto ggml = GgmlOracle::instance().dequantizer(type);
    ASSERT_NE(ggml, nullptr) << "no ggml dequantizer for " << ggml_type_name(type);
    std::vector<float> expected(static_cast<size_t>(n)), ours(static_cast<size_t>(n), 1234.5f);
    ggml(blocks.data(), expected.data(), n);
    dequantize_row(type, blocks.data(), ours.data(), n);
    for (int64_t i = 0; i < n; ++i) {
        const auto want = std::bit_cast<uint32_t>(expected[static_cast<size_t>(i)]);
        const auto got = std::bit_cast<uint32_t>(ours[static_cast<size_t>(i)]);
        ASSERT_EQ(got, want) << ggml_type_name(type) << " " << what << ": value " << i << " (block "
                             << i / ggml_type_traits(type)->block_size << ") is "
                             << ours[static_cast<size_t>(i)] << ", ggml "
                             << expected[static_cast<size_t>(i)];
    }
}

class DequantizeOracle : public ::testing::TestWithParam<GgmlType> {};

TEST_P(DequantizeOracle, RandomBlockBytesGiveGgmlsFloats) {
    REBOX_REQUIRE_GGML_ORACLE();
    const GgmlType type = GetParam();
    const GgmlTypeTraits traits = *ggml_type_traits(type);
    const int64_t n = 256 * 512;
    std::vector<uint8_t> blocks(static_cast<size_t>(n / traits.block_size) * traits.type_size);
    std::mt19937 rng(ggml_type_id(type));
    for (auto& b : blocks) b = static_cast<uint8_t>(rng());
    expect_same_floats(type, blocks, n, "random bytes");
}

TEST_P(DequantizeOracle, BlocksGgmlQuantizedGiveGgmlsFloats) {
    REBOX_REQUIRE_GGML_ORACLE();
    const GgmlType type = GetParam();
    const GgmlTypeTraits traits = *ggml_type_traits(type);
    for (int index = 0; index < 6; ++index) {
        const test::QuantCase c = test::make_quant_case(index);
        const int64_t n = c.nrows * c.n_per_row;
        std::vector<uint8_t> blocks(static_cast<size_t>(n / traits.block_size) * traits.type_size);
        GgmlOracle::instance().quantize(type, c.values.data(), blocks.data(), c.nrows, c.n_per_row,
                                        index % 2 ? c.imatrix.data() : nullptr);
        expect_same_floats(type, blocks, n, c.kind.c_str());
    }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DequantizeOracle, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return ggml_type_name(info.param); });

TEST(DequantizeRow, EveryHalfPatternWidensAsGgmlDoes) {
    REBOX_REQUIRE_GGML_ORACLE();
    std::vector<uint8_t> all(65536 * 2);
    for (uint32_t h = 0; h < 65536; ++h) {
        all[2 * h] = static_cast<uint8_t>(h & 0xff);
        all[2 * h + 1] = static_cast<uint8_t>(h >> 8);
    }
    expect_same_floats(GgmlType::F16, all, 65536, "every pattern");
    expect_same_floats(GgmlType::BF16, all, 65536, "every pattern");
}

TEST(DequantizeRow, F32IsACopy) {
    const float in[4] = {1.5f, -0.f, 3e-45f, -7.25f};
    float out[4] = {};
    dequantize_row(GgmlType::F32, in, out, 4);
    EXPECT_EQ(std::memcmp(in, out, sizeof in), 0);
}

// Hand-worked: a Q8_0 block with d = 0.5 (fp16 0x3800) and codes -128, -1, 0, 127.
TEST(DequantizeRow, Q8_0BlockByHand) {
    std::vector<uint8_t> block(34, 0);
    block[0] = 0x00;
    block[1] = 0x38;
    block[2] = 0x80;
    block[3] = 0xff;
    block[5] = 0x7f;
    std::vector<float> out(32);
    dequantize_row(GgmlType::Q8_0, block.data(), out.data(), 32);
    EXPECT_EQ(out[0], -64.f);
    EXPECT_EQ(out[1], -0.5f);
    EXPECT_EQ(std::bit_cast<uint32_t>(out[2]), 0u);  // 0 * 0.5 = +0
    EXPECT_EQ(out[3], 63.5f);
}

}  // namespace
}  // namespace rebox
