// verify's quantized-tensor check (verify/quantized/quant_check.hpp). The GGUF bytes come from llama.cpp's
// ggml_quantize_chunk (ggml_oracle.hpp) and the expected errors from its dequantize_row_*: a true
// tensor passes on the sample and in full, a changed byte in a sampled block is named (block and
// byte), one outside the sample is caught by `full`, per-expert imatrix slices are honoured, and
// hostile sizes give one problem line instead of a read past the data.
#include "verify/quantized/quant_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "verify/quantized/block_sample.hpp"

namespace rebox::verify_ref {
namespace {

constexpr uint32_t kQ4_K = 12, kQ5_0 = 6;

std::vector<float> normal_values(size_t count, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.f, 0.02f);
    std::vector<float> values(count);
    for (auto& v : values) v = normal(rng);
    return values;
}

struct Fixture {
    std::vector<float> source;
    std::vector<uint8_t> bytes;
};

// rows x width values quantized by ggml, importance per expert slice of rows/experts rows.
Fixture ggml_tensor(uint32_t type, int64_t rows, int64_t width,
                    const std::vector<float>& importance, int64_t experts) {
    Fixture f{normal_values(static_cast<size_t>(rows * width), 5), {}};
    const int64_t rows_per_expert = rows / experts;
    for (int64_t e = 0; e < experts; ++e) {
        const float* w = importance.empty() ? nullptr : importance.data() + e * width;
        const auto part = test::GgmlOracle::instance().quantize_rows(
            type, f.source.data() + e * rows_per_expert * width, rows_per_expert, width, w);
        f.bytes.insert(f.bytes.end(), part.begin(), part.end());
    }
    return f;
}

TEST(VerifyQuantCheck, TrueTensorPassesWithGgmlErrors) {
    REBOX_REQUIRE_GGML_ORACLE();
    const test::GgmlOracle& oracle = test::GgmlOracle::instance();
    const int64_t rows = 96, width = 1024;
    const Fixture f = ggml_tensor(kQ4_K, rows, width, {}, 1);
    QuantTensorInput in{"blk.0.attn_q.weight", kQ4_K, f.source, width, {}, f.bytes, false};
    const QuantTensorCheck sampled = check_quantized_tensor(in);
    EXPECT_TRUE(sampled.bytes_match()) << describe(in, sampled);
    EXPECT_EQ(sampled.blocks_total, 96u * 4);
    EXPECT_LT(sampled.blocks_checked, sampled.blocks_total / 8) << "a sample, not everything";
    EXPECT_GE(sampled.blocks_checked, 4u) << "at least the tensor's and rows' ends";
    in.full = true;
    const QuantTensorCheck full = check_quantized_tensor(in);
    EXPECT_TRUE(full.bytes_match());
    EXPECT_EQ(full.blocks_checked, full.blocks_total);

    std::vector<float> decoded(f.source.size());
    ASSERT_TRUE(oracle.dequantize(kQ4_K, f.bytes.data(), decoded.data(),
                                  static_cast<int64_t>(decoded.size())));
    double sum = 0, max = 0;
    for (size_t i = 0; i < decoded.size(); ++i) {
        const double e = std::fabs(static_cast<double>(decoded[i]) - f.source[i]);
        sum += e * e;
        max = std::max(max, e);
    }
    EXPECT_DOUBLE_EQ(full.rmse, std::sqrt(sum / static_cast<double>(decoded.size())));
    EXPECT_DOUBLE_EQ(full.max_abs_error, max);
    // The sample's errors are over its blocks only.
    double sample_sum = 0, sample_max = 0;
    uint64_t sampled_values = 0;
    for (uint64_t b = 0; b < full.blocks_total; ++b) {
        if (!block_in_sample(b, full.blocks_total, 4, sample_seed(in.gguf_name))) continue;
        for (size_t i = b * 256; i < (b + 1) * 256; ++i, ++sampled_values) {
            const double e = std::fabs(static_cast<double>(decoded[i]) - f.source[i]);
            sample_sum += e * e;
            sample_max = std::max(sample_max, e);
        }
    }
    EXPECT_EQ(sampled_values, sampled.blocks_checked * 256);
    EXPECT_DOUBLE_EQ(sampled.rmse, std::sqrt(sample_sum / static_cast<double>(sampled_values)));
    EXPECT_DOUBLE_EQ(sampled.max_abs_error, sample_max);
    EXPECT_GT(full.rmse, 0.0) << "Q4_K is lossy";
    EXPECT_NE(describe(in, full).find("384/384 blocks identical"), std::string::npos)
        << describe(in, full);
}

TEST(VerifyQuantCheck, ChangedByteNamedInSampleAndFull) {
    REBOX_REQUIRE_GGML_ORACLE();
    const int64_t rows = 256, width = 1024;
    Fixture f = ggml_tensor(kQ4_K, rows, width, {}, 1);
    const char* name = "blk.3.ffn_up.weight";
    const uint64_t blocks = rows * 4, seed = sample_seed(name);
    uint64_t inside = 0, outside = 0;
    for (uint64_t b = 1; b < blocks && (!inside || !outside); ++b) {
        if (block_in_sample(b, blocks, 4, seed)) {
            if (!inside && b > 4) inside = b;
        } else if (!outside) {
            outside = b;
        }
    }
    ASSERT_TRUE(inside && outside);
    f.bytes[inside * 144 + 20] ^= 0x10;  // a code nibble of a sampled block
    f.bytes[outside * 144 + 1] ^= 0x01;  // the d of a block outside the sample
    QuantTensorInput in{name, kQ4_K, f.source, width, {}, f.bytes, false};
    const QuantTensorCheck sampled = check_quantized_tensor(in);
    EXPECT_FALSE(sampled.bytes_match());
    EXPECT_EQ(sampled.first_diff_block, inside);
    EXPECT_EQ(sampled.first_diff_byte, 20u);
    EXPECT_EQ(sampled.blocks_checked - sampled.blocks_identical, 1u);
    EXPECT_EQ(sampled.got_block[20] ^ sampled.expected_block[20], 0x10);
    in.full = true;
    const QuantTensorCheck full = check_quantized_tensor(in);
    EXPECT_EQ(full.blocks_checked - full.blocks_identical, 2u);
    EXPECT_EQ(full.first_diff_block, std::min(inside, outside));
    EXPECT_NE(describe(in, full).find("2 of 1024 blocks differ"), std::string::npos)
        << describe(in, full);
}

TEST(VerifyQuantCheck, PerExpertImportanceSlices) {
    REBOX_REQUIRE_GGML_ORACLE();
    const int64_t experts = 2, rows = 8, width = 512;  // 3-D: ne = {512, 4, 2}
    std::vector<float> importance = normal_values(static_cast<size_t>(experts * width), 9);
    for (auto& w : importance) w = std::fabs(w) * 100.f;
    const Fixture f = ggml_tensor(kQ5_0, rows, width, importance, experts);
    QuantTensorInput in{
        "blk.0.ffn_down_exps.weight", kQ5_0, f.source, width, importance, f.bytes, true};
    EXPECT_TRUE(check_quantized_tensor(in).bytes_match());
    // The same entry read as one slice for every row would weigh expert 1 with expert 0's slice.
    in.importance = std::span<const float>(importance).first(width);
    EXPECT_FALSE(check_quantized_tensor(in).bytes_match());
}

TEST(VerifyQuantCheck, HostileSizesAreProblemLines) {
    const std::vector<float> source(2 * 512, 0.5f);
    std::vector<uint8_t> bytes(2 * 2 * 144);
    const std::vector<float> importance(512, 1.f);
    QuantTensorInput in{"t", kQ4_K, source, 512, {}, bytes, false};
    EXPECT_TRUE(check_quantized_tensor(in).problem.empty());

    auto problem = [&](QuantTensorInput changed) {
        return check_quantized_tensor(changed).problem;
    };
    QuantTensorInput truncated = in;
    truncated.gguf_bytes = std::span<const uint8_t>(bytes).first(bytes.size() - 1);
    EXPECT_NE(problem(truncated).find("holds 575 bytes"), std::string::npos) << problem(truncated);
    QuantTensorInput ragged = in;
    ragged.values_per_row = 320;
    EXPECT_NE(problem(ragged).find("rows of 320 values cannot be Q4_K"), std::string::npos);
    QuantTensorInput zero_rows = in;
    zero_rows.values_per_row = 0;
    EXPECT_FALSE(problem(zero_rows).empty());
    QuantTensorInput partial = in;
    partial.source = std::span<const float>(source).first(700);
    EXPECT_NE(problem(partial).find("not whole rows"), std::string::npos);
    QuantTensorInput short_importance = in;
    short_importance.importance = std::span<const float>(importance).first(100);
    EXPECT_NE(problem(short_importance).find("imatrix entry has 100 values"), std::string::npos);
    std::vector<float> bad_importance = importance;
    bad_importance[3] = NAN;
    QuantTensorInput nan_importance = in;
    nan_importance.importance = bad_importance;
    EXPECT_NE(problem(nan_importance).find("not finite"), std::string::npos);
    QuantTensorInput unknown = in;
    unknown.ggml_type = 15;  // Q8_K (no file type llama-quantize writes holds it)
    EXPECT_NE(problem(unknown).find("not one verify re-quantizes"), std::string::npos);
}

}  // namespace
}  // namespace rebox::verify_ref
