// The sampling rule of verify's quantized-tensor check (verify/quantized/block_sample.hpp), from its
// definition: ends of the tensor and of its first and last rows always in, small tensors whole,
// about 1/64 of the rest, spread over columns, deterministic, seeded per tensor name, `full` all.
#include "verify/quantized/block_sample.hpp"

#include <gtest/gtest.h>

#include <set>

namespace rebox::verify_ref {
namespace {

TEST(VerifyBlockSample, EndsAlwaysInAndSmallTensorsWhole) {
    const uint64_t seed = sample_seed("blk.0.ffn_down.weight");
    const auto sample = sample_blocks(16 * 1000, 16, seed, false);
    const std::set<uint64_t> in(sample.begin(), sample.end());
    for (const uint64_t must : {0ull, 15ull, 16ull * 999, 16ull * 1000 - 1})
        EXPECT_TRUE(in.count(must)) << "block " << must;
    EXPECT_EQ(sample_blocks(kAllBlocksUpTo, 4, seed, false).size(), kAllBlocksUpTo);
    EXPECT_EQ(sample_blocks(7, 7, seed, false).size(), 7u);
    EXPECT_TRUE(sample_blocks(0, 1, seed, false).empty());
    EXPECT_FALSE(block_in_sample(100, 100, 10, seed)) << "past the end";
}

TEST(VerifyBlockSample, AboutOneIn64SpreadOverColumns) {
    const uint64_t blocks_per_row = 16, rows = 40000;  // a 4096-wide Q4_K tensor, 640000 blocks
    const auto sample =
        sample_blocks(rows * blocks_per_row, blocks_per_row, sample_seed("output.weight"), false);
    const double fraction = static_cast<double>(sample.size()) / (rows * blocks_per_row);
    EXPECT_GT(fraction, 0.9 / kSampleOneIn);
    EXPECT_LT(fraction, 1.1 / kSampleOneIn);
    std::vector<uint64_t> per_column(blocks_per_row);
    for (const uint64_t b : sample) ++per_column[b % blocks_per_row];
    for (uint64_t c = 0; c < blocks_per_row; ++c)
        EXPECT_GT(per_column[c], sample.size() / blocks_per_row / 2) << "column " << c;
    for (size_t i = 1; i < sample.size(); ++i) ASSERT_LT(sample[i - 1], sample[i]);
}

TEST(VerifyBlockSample, DeterministicSeededAndFull) {
    const uint64_t a = sample_seed("blk.0.attn_q.weight"), b = sample_seed("blk.1.attn_q.weight");
    EXPECT_NE(a, b);
    EXPECT_EQ(sample_seed(""), 0xcbf29ce484222325ull) << "FNV-1a offset basis";
    EXPECT_EQ(sample_seed("a"), 0xaf63dc4c8601ec8cull) << "FNV-1a of \"a\"";
    EXPECT_EQ(sample_blocks(100000, 16, a, false), sample_blocks(100000, 16, a, false));
    EXPECT_NE(sample_blocks(100000, 16, a, false), sample_blocks(100000, 16, b, false));
    const auto all = sample_blocks(1000, 10, a, true);
    ASSERT_EQ(all.size(), 1000u);
    for (uint64_t i = 0; i < 1000; ++i) EXPECT_EQ(all[i], i);
}

}  // namespace
}  // namespace rebox::verify_ref
