// The ggml type table against docs/gguf.md §2.1 (block sizes and bytes per block as published).
#include "rebox/ggml_type.hpp"

#include <gtest/gtest.h>

namespace rebox {
namespace {

TEST(GgmlType, TableMatchesPublishedSizes) {
    struct Expect {
        uint32_t id;
        const char* name;
        uint32_t block, bytes;
    };
    for (const Expect& e :
         {Expect{0, "F32", 1, 4}, Expect{1, "F16", 1, 2}, Expect{2, "Q4_0", 32, 18},
          Expect{3, "Q4_1", 32, 20}, Expect{6, "Q5_0", 32, 22}, Expect{7, "Q5_1", 32, 24},
          Expect{8, "Q8_0", 32, 34}, Expect{14, "Q6_K", 256, 210}, Expect{30, "BF16", 1, 2},
          Expect{39, "MXFP4", 32, 17}, Expect{42, "Q2_0", 64, 18}}) {
        const auto t = ggml_type_traits(static_cast<GgmlType>(e.id));
        ASSERT_TRUE(t.has_value()) << e.id;
        EXPECT_EQ(t->name, e.name);
        EXPECT_EQ(t->block_size, e.block);
        EXPECT_EQ(t->type_size, e.bytes);
    }
}

TEST(GgmlType, RemovedAndOutOfRangeIdsAreUnknown) {
    for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u, 1000u})
        EXPECT_FALSE(ggml_type_traits(static_cast<GgmlType>(id)).has_value()) << id;
    EXPECT_EQ(ggml_type_name(static_cast<GgmlType>(4)), "type#4");
}

TEST(GgmlType, NbytesChecksBlocksDimsAndOverflow) {
    EXPECT_EQ(ggml_nbytes(GgmlType::Q4_1, {64, 4}),
              4u * 2 * 20);  // Q4_1 4x64 = 160 B (notes §1.5 experiment)
    EXPECT_EQ(ggml_nbytes(GgmlType::F32, {5}), 20u);
    EXPECT_FALSE(ggml_nbytes(GgmlType::Q4_1, {48, 4}).has_value());  // not a whole block
    EXPECT_FALSE(ggml_nbytes(GgmlType::F32, {4, 0}).has_value());    // zero dim
    EXPECT_FALSE(ggml_nbytes(GgmlType::F32, {INT64_MAX, INT64_MAX}).has_value());
    EXPECT_FALSE(ggml_nbytes(static_cast<GgmlType>(4), {32}).has_value());
}

}  // namespace
}  // namespace rebox
