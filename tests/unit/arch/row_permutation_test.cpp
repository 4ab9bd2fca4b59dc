// llama's q/k row permutation against index vectors worked out by hand from LlamaModel.permute
// (w.reshape(n_head, 2, D/2, ...).swapaxes(1, 2)): for each head, GGUF rows take the source rows
// 0, D/2, 1, D/2+1, ... of that head. Both the converter's map (src/arch) and verify's own inverse
// (src/verify/values/ref_rope.hpp) must give the same vectors.
#include <gtest/gtest.h>

#include "arch/transforms.hpp"
#include "verify/values/ref_rope.hpp"

namespace rebox {
namespace {

struct Case {
    uint64_t rows;
    uint32_t heads;
    std::vector<uint32_t> source_of;  // GGUF row r holds source row source_of[r]
};

const Case kCases[] = {
    // One head, D = 2: nothing moves.
    {2, 1, {0, 1}},
    // One head, D = 8: halves [0..3] [4..7] interleave.
    {8, 1, {0, 4, 1, 5, 2, 6, 3, 7}},
    // MHA-like: 2 heads of D = 4.
    {8, 2, {0, 2, 1, 3, 4, 6, 5, 7}},
    // GQA: q has 4 heads of D = 4 (16 rows), k has 2 heads of the same D (8 rows, case above).
    {16, 4, {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15}},
    // The tiny llama fixture's k: 2 heads of D = 16.
    {32, 2, {0,  8,  1,  9,  2,  10, 3,  11, 4,  12, 5,  13, 6,  14, 7,  15,
             16, 24, 17, 25, 18, 26, 19, 27, 20, 28, 21, 29, 22, 30, 23, 31}},
};

TEST(RowPermutation, ConverterMapMatchesHandVectors) {
    for (const Case& c : kCases) {
        const auto map = arch::rope_pair_source_rows(c.rows, c.heads);
        ASSERT_TRUE(map.has_value()) << c.rows << "/" << c.heads;
        EXPECT_EQ(*map, c.source_of) << c.rows << " rows, " << c.heads << " heads";
    }
}

TEST(RowPermutation, VerifyInverseMatchesHandVectors) {
    for (const Case& c : kCases) {
        std::vector<uint32_t> got;
        for (uint64_t r = 0; r < c.rows; ++r)
            got.push_back(static_cast<uint32_t>(verify_ref::rope_source_row(r, c.rows / c.heads)));
        EXPECT_EQ(got, c.source_of) << c.rows << " rows, " << c.heads << " heads";
    }
}

TEST(RowPermutation, RefusesRowsThatAreNotEvenHeads) {
    EXPECT_FALSE(arch::rope_pair_source_rows(10, 4).has_value());  // 4 heads do not divide 10
    EXPECT_FALSE(arch::rope_pair_source_rows(12, 4).has_value());  // head size 3 is odd
    EXPECT_FALSE(arch::rope_pair_source_rows(8, 0).has_value());
}

}  // namespace
}  // namespace rebox
