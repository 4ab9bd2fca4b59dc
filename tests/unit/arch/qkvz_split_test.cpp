// Qwen3-Next's in_proj_qkvz split against index vectors worked out by hand from
// Qwen3NextModel.modify_tensors: the rows seen as [k_heads, q | k | v | z] per key head, split,
// then q of every head, k of every head, v of every head (attn_qkv) and z of every head
// (attn_gate). Both the writer's map (src/arch/transforms) and verify's own reading
// (verify/sources/qkvz_index: SourceTensor::deinterleaved_source_row) must give them.
#include <gtest/gtest.h>

#include "arch/transforms.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox {
namespace {

// 2 key heads, head_k_dim 1, value rows per key head 2 (2 value heads per key head of dim 1):
// source rows per head h: q h*6, k h*6+1, v h*6+2..3, z h*6+4..5.
const std::vector<uint32_t> kQkv = {0, 6, 1, 7, 2, 3, 8, 9};
const std::vector<uint32_t> kZ = {4, 5, 10, 11};
// 3 key heads, head_k_dim 2, value rows 1: group 6; q h*6+0..1, k h*6+2..3, v h*6+4, z h*6+5.
const std::vector<uint32_t> kQkv3 = {0, 1, 6, 7, 12, 13, 2, 3, 8, 9, 14, 15, 4, 10, 16};
const std::vector<uint32_t> kZ3 = {5, 11, 17};

TEST(QkvzSplit, WriterRowMapsMatchHandVectors) {
    EXPECT_EQ(arch::qkvz_source_rows(2, 1, 2, false), kQkv);
    EXPECT_EQ(arch::qkvz_source_rows(2, 1, 2, true), kZ);
    EXPECT_EQ(arch::qkvz_source_rows(3, 2, 1, false), kQkv3);
    EXPECT_EQ(arch::qkvz_source_rows(3, 2, 1, true), kZ3);
    EXPECT_FALSE(arch::qkvz_source_rows(0, 1, 2, false).has_value());
    EXPECT_FALSE(arch::qkvz_source_rows(2, 0, 2, false).has_value());
}

TEST(QkvzSplit, VerifyRowsMatchHandVectors) {
    const auto rows = [](uint32_t heads, uint64_t key, uint64_t value, bool z, size_t count) {
        verify_ref::SourceTensor part;
        part.deinterleave = z ? 6 : 5;
        part.qkvz_heads = heads;
        part.qkvz_key_rows = key;
        part.qkvz_value_rows = value;
        std::vector<uint32_t> got;
        for (uint64_t r = 0; r < count; ++r)
            got.push_back(static_cast<uint32_t>(part.deinterleaved_source_row(r)));
        return got;
    };
    EXPECT_EQ(rows(2, 1, 2, false, kQkv.size()), kQkv);
    EXPECT_EQ(rows(2, 1, 2, true, kZ.size()), kZ);
    EXPECT_EQ(rows(3, 2, 1, false, kQkv3.size()), kQkv3);
    EXPECT_EQ(rows(3, 2, 1, true, kZ3.size()), kZ3);
}

}  // namespace
}  // namespace rebox
