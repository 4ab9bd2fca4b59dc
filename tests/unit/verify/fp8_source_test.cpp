// verify's own reading of FP8 block-quantized checkpoints (verify/sources/fp8_source*): its E4M3
// decoder against the OCP 8-bit floating point spec (all 256 bytes against the spec's formula,
// plus hand-picked values), the expected values of a small tensor with partial edge blocks worked
// by hand, the report of a product binary32 cannot hold, and the index's problems for hostile
// parts and configs.
#include "verify/sources/fp8_source.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "rebox/error.hpp"
#include "source/mcq_test_writer.hpp"
#include "test_files.hpp"
#include "verify/sources/fp8_source_index.hpp"

namespace rebox::test {
namespace {

using verify_ref::ref_e4m3;

TEST(VerifyFp8, E4m3EveryByteFollowsTheSpecFormula) {
    // OCP OFP8 v1.0, E4M3: (-1)^S * 2^(E-7) * (1 + M/8) for E > 0, (-1)^S * 2^-6 * (M/8) for E = 0;
    // S.1111.111 is NaN and there are no infinities.
    for (int byte = 0; byte < 256; ++byte) {
        const int s = byte >> 7, e = (byte >> 3) & 15, m = byte & 7;
        const double got = ref_e4m3(static_cast<uint8_t>(byte));
        if (e == 15 && m == 7) {
            EXPECT_TRUE(std::isnan(got)) << byte;
            continue;
        }
        double want = e == 0 ? std::pow(2.0, -6) * (m / 8.0) : std::pow(2.0, e - 7) * (1 + m / 8.0);
        if (s) want = -want;
        EXPECT_EQ(got, want) << byte;
        EXPECT_EQ(std::signbit(got), s == 1) << byte;  // -0 included
    }
    EXPECT_EQ(ref_e4m3(0x7E), 448.0);
    EXPECT_EQ(ref_e4m3(0x01), 0.001953125);
    EXPECT_EQ(ref_e4m3(0x38), 1.0);
}

std::vector<uint8_t> le16(std::initializer_list<uint16_t> bits) {
    std::vector<uint8_t> bytes;
    for (uint16_t b : bits)
        bytes.push_back(static_cast<uint8_t>(b & 0xff)), bytes.push_back(b >> 8);
    return bytes;
}

TEST(VerifyFp8, ExpectedValuesTakeEachBlocksScale) {
    // 3 x 5 in blocks of 2 x 3: scales (F16) 1, 4 / 0.5, 8.
    std::vector<uint8_t> codes(15, 0x38);
    codes[4] = 0x3C;   // 1.5 in block (0, 1)
    codes[14] = 0xC0;  // -2 in block (1, 1)
    const std::vector<uint8_t> scales = le16({0x3C00, 0x4400, 0x3800, 0x4800});
    verify_ref::Fp8Source f{3,           5, 2, 3, 2, codes, scales, verify_ref::SourceFloat::F16,
                            std::nullopt};
    float out[15];
    verify_ref::PrequantInexact inexact;
    verify_ref::expected_from_fp8(f, 0, out, inexact);
    const float want[15] = {1, 1, 1, 4, 6, 1, 1, 1, 4, 4, 0.5f, 0.5f, 0.5f, 8, -16};
    for (int i = 0; i < 15; ++i) EXPECT_EQ(out[i], want[i]) << i;
    EXPECT_EQ(inexact.index, std::numeric_limits<uint64_t>::max());
}

TEST(VerifyFp8, AProductBinary32CannotHoldIsReported) {
    // 1.875 x F32 (1 + 2^-23): 27 significant bits, at index 2 (row 1, column 0).
    const std::vector<uint8_t> codes = {0x38, 0x38, 0x3F, 0x38};
    const float scale = 1.00000012f;
    std::vector<uint8_t> scales(4);
    std::memcpy(scales.data(), &scale, 4);
    verify_ref::Fp8Source f{
        2, 2, 128, 128, 1, codes, scales, verify_ref::SourceFloat::F32, std::nullopt};
    float out[4];
    verify_ref::PrequantInexact inexact;
    verify_ref::expected_from_fp8(f, 0, out, inexact);
    EXPECT_EQ(inexact.index, 2u);
    EXPECT_EQ(inexact.value, 1.875 * (1.0 + 0x1p-23));
    EXPECT_EQ(out[0], scale);
}

struct Fp8Checkpoint {
    ScratchDir dir{"verify-fp8"};
    std::vector<StTensor> tensors;
    nlohmann::json block_size = {2, 3};
    Fp8Checkpoint() {
        tensors = {
            {"model.layers.0.mlp.up_proj.weight",
             "F8_E4M3",
             {3, 5},
             std::vector<uint8_t>(15, 0x38)},
            {"model.layers.0.mlp.up_proj.weight_scale_inv",
             "BF16",
             {2, 2},
             le16({0x3F80, 0x3F80, 0x3F80, 0x3F80})},
            {"model.layers.0.mlp.up_proj.activation_scale", "F32", {}, std::vector<uint8_t>(4, 0)},
            {"model.norm.weight", "BF16", {5}, std::vector<uint8_t>(10, 0)}};
    }
    verify_ref::SourceIndex index(std::unique_ptr<SafetensorsModel>& model) {
        std::ofstream(dir.path() / "config.json") << nlohmann::json{
            {"model_type", "qwen3"},
            {"quantization_config",
             {{"quant_method", "fp8"},
              {"weight_block_size", block_size}}}}.dump();
        write_safetensors(dir.path() / "model.safetensors", tensors, {});
        const auto blocks = verify_ref::fp8_layout(dir.path() / "config.json");
        if (!blocks) throw std::runtime_error("test: no fp8 block size");
        model = std::make_unique<SafetensorsModel>(SafetensorsModel::open(dir.path()));
        return verify_ref::index_fp8_source(*model, *blocks);
    }
};

TEST(VerifyFp8, IndexPairsWeightAndScaleAndDropsActivationScales) {
    Fp8Checkpoint c;
    std::unique_ptr<SafetensorsModel> model;
    const verify_ref::SourceIndex index = c.index(model);
    EXPECT_TRUE(index.problems.empty());
    ASSERT_EQ(index.entries.size(), 2u);  // the weight and the norm
    const auto& up = index.entries.at(index.by_stripped_name.at("layers.0.mlp.up_proj.weight"));
    EXPECT_TRUE(up.fp8);
    EXPECT_TRUE(up.problem.empty()) << up.problem;
    EXPECT_EQ(up.fp8_source.scale_cols, 2u);
    EXPECT_EQ(up.fp8_source.block_rows, 2u);
}

TEST(VerifyFp8, HostilePartsAndConfigsAreProblems) {
    {
        Fp8Checkpoint c;  // scale one block column short
        c.tensors[1].shape = {2, 1};
        c.tensors[1].data.resize(4);
        std::unique_ptr<SafetensorsModel> model;
        const verify_ref::SourceIndex index = c.index(model);
        const auto& up = index.entries.at(index.by_stripped_name.at("layers.0.mlp.up_proj.weight"));
        EXPECT_NE(up.problem.find("F32, BF16 or F16 [2, 2]"), std::string::npos) << up.problem;
    }
    {
        Fp8Checkpoint c;  // a scale without its weight
        c.tensors.erase(c.tensors.begin());
        std::unique_ptr<SafetensorsModel> model;
        const verify_ref::SourceIndex index = c.index(model);
        ASSERT_EQ(index.problems.size(), 1u);
        EXPECT_NE(index.problems[0].find("has no FP8 weight"), std::string::npos);
    }
    {
        Fp8Checkpoint c;  // a weight of another dtype beside a scale
        c.tensors[0].dtype = "U8";
        std::unique_ptr<SafetensorsModel> model;
        const verify_ref::SourceIndex index = c.index(model);
        const auto& up = index.entries.at(index.by_stripped_name.at("layers.0.mlp.up_proj.weight"));
        EXPECT_NE(up.problem.find("dtype U8"), std::string::npos) << up.problem;
    }
    for (const nlohmann::json& bad :
         {nlohmann::json{0, 3}, nlohmann::json{2}, nlohmann::json("x")}) {
        Fp8Checkpoint c;
        c.block_size = bad;
        std::unique_ptr<SafetensorsModel> model;
        EXPECT_THROW(c.index(model), Error) << bad.dump();
    }
}

// The lossy path's rounding (convert --quantize from FP8: the converter's BF16 / F16 file),
// verify's own, against values worked by hand: ties to the even neighbour, overflow to infinity.
TEST(Fp8Rounding, Bf16TiesToEvenByHand) {
    using verify_ref::ref_round_to_bf16;
    EXPECT_EQ(ref_round_to_bf16(1.0f + 0x1p-8f), 1.0f);                // tie: 1 (even) wins
    EXPECT_EQ(ref_round_to_bf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);  // tie: 1 + 2^-6 (even)
    EXPECT_EQ(ref_round_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 1.0f + 0x1p-7f);  // above the tie
    EXPECT_EQ(ref_round_to_bf16(-1.0f - 0x1p-9f), -1.0f);
    EXPECT_EQ(ref_round_to_bf16(0x1.ffffp127f), std::numeric_limits<float>::infinity());
    EXPECT_EQ(ref_round_to_bf16(0.0f), 0.0f);
}

TEST(Fp8Rounding, HalfTiesToEvenByHand) {
    using verify_ref::ref_round_to_half;
    EXPECT_EQ(ref_round_to_half(1.0f + 0x1p-11f), 1.0f);                // tie: 1 (even) wins
    EXPECT_EQ(ref_round_to_half(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);  // tie: even neighbour
    EXPECT_EQ(ref_round_to_half(65519.0f), 65504.0f);                   // below 65520
    EXPECT_EQ(ref_round_to_half(65520.0f), std::numeric_limits<float>::infinity());  // the tie
    EXPECT_EQ(ref_round_to_half(-70000.0f), -std::numeric_limits<float>::infinity());
    EXPECT_EQ(ref_round_to_half(0x1p-25f), 0.0f);              // half the smallest subnormal: 0
    EXPECT_EQ(ref_round_to_half(0x1.8p-25f), 0x1p-24f);        // above it: the subnormal
    EXPECT_EQ(ref_round_to_half(3 * 0x1p-25f), 2 * 0x1p-24f);  // tie between 1 and 2 ulps: 2
}

}  // namespace
}  // namespace rebox::test
