// gguf-py's parameter count and size label, worked by hand: count * 1e-N, digits of round(),
// two significant digits, "NxSIZE" over one expert plus the shared tensors.
#include "model/size_label.hpp"

#include <gtest/gtest.h>

namespace rebox {
namespace {

TEST(SizeLabel, RoundedNotation) {
    EXPECT_EQ(rounded_weight_count(596'049'920), "596M");  // round(596.04992) has 3 digits
    EXPECT_EQ(rounded_weight_count(1'543'714'304), "1.5B");
    EXPECT_EQ(rounded_weight_count(7'241'732'096), "7.2B");
    EXPECT_EQ(rounded_weight_count(40'000), "40K");
    EXPECT_EQ(rounded_weight_count(400), "0.40K");        // round(0.4) = 0: no digit, two decimals
    EXPECT_EQ(rounded_weight_count(1'000'000), "1000K");  // not > 1e6
    EXPECT_EQ(rounded_weight_count(2'500'000), "2.5M");   // round(2.5) = 2 (half to even)
}

TEST(SizeLabel, MixtureOfExperts) {
    // 8 experts of 2x3x8 stacked (one expert's share 6), 100 shared: "8x106" parameters -> 0.11K.
    const std::vector<CountedTensor> tensors = {
        {"token_embd.weight", {10, 10}},
        {"blk.0.ffn_up_exps.weight", {2, 3, 8}},
    };
    const ParameterCounts counts = count_parameters(tensors);
    EXPECT_EQ(counts.total, 148);
    EXPECT_EQ(counts.shared, 100);
    EXPECT_EQ(counts.expert, 6);
    EXPECT_EQ(counts.expert_count, 8);
    EXPECT_EQ(size_label(counts), "8x0.11K");
}

TEST(SizeLabel, DenseModel) {
    const ParameterCounts counts = count_parameters({{"a", {64, 1000}}, {"b", {64}}});
    EXPECT_EQ(counts.total, 64064);
    EXPECT_EQ(counts.expert_count, 0);
    EXPECT_EQ(size_label(counts), "64K");
}

}  // namespace
}  // namespace rebox
