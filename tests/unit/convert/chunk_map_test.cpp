// split_into_chunks on hand-built plans: a stacked-experts Q4_1 tensor is cut per expert (no chunk
// reads two experts) and each chunk names the expert's source tensor and the value it starts at;
// indices worked by hand (Q4_1: 32 values = 20 bytes per block).
#include "convert/chunk_map.hpp"

#include <gtest/gtest.h>

#include "rebox/ggml_type.hpp"

namespace rebox::convert_detail {
namespace {

struct Want {
    uint64_t first, count, out_offset, out_bytes;
    size_t source_index;
    uint64_t source_first;
};

void expect_chunks(const std::vector<Chunk>& got, const std::vector<Want>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE("chunk " + std::to_string(i));
        EXPECT_EQ(got[i].first, want[i].first);
        EXPECT_EQ(got[i].count, want[i].count);
        EXPECT_EQ(got[i].out_offset, want[i].out_offset);
        EXPECT_EQ(got[i].out_bytes, want[i].out_bytes);
        EXPECT_EQ(got[i].source_index, want[i].source_index);
        EXPECT_EQ(got[i].source_first, want[i].source_first);
    }
}

TEST(ChunkMap, StackedExpertsAreCutPerExpert) {
    // 3 experts of [2, 64] (128 values = 4 blocks = 80 bytes each), sources 7, 5, 9 (file order
    // need not be expert order); chunks of at most 3 blocks (60 bytes).
    Plan plan;
    TensorPlan tp;
    tp.gguf_name = "blk.0.ffn_up_exps.weight";
    tp.type = GgmlType::Q4_1;
    tp.encoding = Encoding::q4_1_repack;
    tp.ne = {64, 2, 3};
    tp.nbytes = 240;
    tp.source_index = 7;
    tp.expert_sources = {7, 5, 9};
    tp.expert_values = 128;
    plan.tensors.push_back(tp);
    expect_chunks(split_into_chunks(plan, 60), {
                                                   {0, 96, 0, 60, 7, 0},
                                                   {96, 32, 60, 20, 7, 96},
                                                   {128, 96, 80, 60, 5, 0},
                                                   {224, 32, 140, 20, 5, 96},
                                                   {256, 96, 160, 60, 9, 0},
                                                   {352, 32, 220, 20, 9, 96},
                                               });
    // Chunks larger than an expert still stop at its end: one chunk per expert.
    expect_chunks(split_into_chunks(plan, 1000), {
                                                     {0, 128, 0, 80, 7, 0},
                                                     {128, 128, 80, 80, 5, 0},
                                                     {256, 128, 160, 80, 9, 0},
                                                 });
}

TEST(ChunkMap, FusedPiecesStartInsideTheirSource) {
    // gemma4's ffn_gate_up_exps from mlx-lm's split halves: 2 experts, each [2 gate rows, 2 up
    // rows] of 64 (128 values per half-expert); pieces gate e0, up e0, gate e1, up e1 from sources
    // 4 (gate) and 6 (up), expert 1's halves starting 128 values into each source.
    Plan plan;
    TensorPlan tp;
    tp.gguf_name = "blk.0.ffn_gate_up_exps.weight";
    tp.type = GgmlType::Q4_1;
    tp.encoding = Encoding::q4_1_repack;
    tp.ne = {64, 4, 2};
    tp.nbytes = 320;
    tp.source_index = 4;
    tp.expert_sources = {4, 6, 4, 6};
    tp.expert_firsts = {0, 0, 128, 128};
    tp.expert_values = 128;
    plan.tensors.push_back(tp);
    expect_chunks(split_into_chunks(plan, 1000), {
                                                     {0, 128, 0, 80, 4, 0},
                                                     {128, 128, 80, 80, 6, 0},
                                                     {256, 128, 160, 80, 4, 128},
                                                     {384, 128, 240, 80, 6, 128},
                                                 });
    // Smaller chunks keep their offset inside the piece too.
    expect_chunks(split_into_chunks(plan, 60), {
                                                   {0, 96, 0, 60, 4, 0},
                                                   {96, 32, 60, 20, 4, 96},
                                                   {128, 96, 80, 60, 6, 0},
                                                   {224, 32, 140, 20, 6, 96},
                                                   {256, 96, 160, 60, 4, 128},
                                                   {352, 32, 220, 20, 4, 224},
                                                   {384, 96, 240, 60, 6, 128},
                                                   {480, 32, 300, 20, 6, 224},
                                               });
}

TEST(ChunkMap, PlainTensorsReadTheirOneSource) {
    // F32 tensor of 10 values (4 bytes each) from source 2, chunks of 16 bytes: 4 + 4 + 2 values.
    Plan plan;
    TensorPlan tp;
    tp.type = GgmlType::F32;
    tp.encoding = Encoding::copy_f32;
    tp.ne = {10};
    tp.nbytes = 40;
    tp.source_index = 2;
    plan.tensors.push_back(tp);
    expect_chunks(split_into_chunks(plan, 16), {
                                                   {0, 4, 0, 16, 2, 0},
                                                   {4, 4, 16, 16, 2, 4},
                                                   {8, 2, 32, 8, 2, 8},
                                               });
}

}  // namespace
}  // namespace rebox::convert_detail
