// The plan's new per-tensor decisions reach the bytes: encode_chunk (convert's dispatcher) honours
// zero_code_groups_get_zero_scale for BF16 scales and writes dequant_f16 chunks larger than its
// internal buffer. Expected bytes are worked by hand from the binary16/bfloat16 layouts.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "convert/chunk_encoder.hpp"
#include "encode/block_encode.hpp"
#include "hand_tensor.hpp"
#include "quant_test_bytes.hpp"
#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox {
namespace {

using convert_detail::Chunk;
using convert_detail::encode_chunk;

using test::u16_le;

TEST(PlanChunkPaths, ZeroScaleFlagReachesTheQ4_1Blocks) {
    // Group 0 (codes 0, scale bf16 0x33d7 ~1e-7, min bf16 0x3f80 = 1.0) and group 1 (codes 1,
    // scale 0x3f80, min 0): block 0 gets d = 0x0000, m = 0x3c00; block 1 d = 0x3c00, m = 0.
    std::vector<uint8_t> codes(64, 0);
    for (int i = 32; i < 64; ++i) codes[i] = 1;
    const test::HandTensor hand(4, 32, 1, 64, codes, FloatDtype::BF16, u16_le({0x33d7, 0x3f80}),
                                u16_le({0x3f80, 0x0000}));
    const SourceTensor& t = hand.tensor;
    TensorPlan plan;
    plan.type = GgmlType::Q4_1;
    plan.encoding = Encoding::q4_1_repack;
    plan.nbytes = 40;
    plan.gguf_name = "blk.0.attn_q.weight";
    const Chunk chunk{0, 0, 64, 0, 40};
    std::vector<uint8_t> out(40);
    // Flag not set: the exact rule refuses group 0's scale. The plan would have set the flag, so
    // reaching the kernel this way is a broken invariant: an internal error naming the tensor.
    try {
        encode_chunk(t, plan, chunk, out);
        ADD_FAILURE() << "encode_chunk accepted a scale not exact in fp16";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::internal);
        EXPECT_EQ(e.exit_code(), 70);
        EXPECT_EQ(e.field(), "blk.0.attn_q.weight: scales[0]");
        EXPECT_NE(std::string(e.what()).find("internal error"), std::string::npos) << e.what();
    }
    plan.zero_code_groups_get_zero_scale = true;
    encode_chunk(t, plan, chunk, out);
    const std::vector<uint8_t> head0 = {0x00, 0x00, 0x00, 0x3c}, head1 = {0x00, 0x3c, 0x00, 0x00};
    EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + 4), head0);
    EXPECT_EQ(std::vector<uint8_t>(out.begin() + 20, out.begin() + 24), head1);
    EXPECT_EQ(out[24], 0x11);
}

TEST(PlanChunkPaths, DequantF16ChunkLargerThanTheBuffer) {
    // 10000 6-bit codes c = i % 64, scale 2^-10 (fp16 0x1400), min 0.5 (0x3800): fp16 value bits
    // are 0x3800 + 2c (0.5 + c/1024 on fp16's 2^-11 grid in [0.5, 1)). Chunk = values 64..9999.
    constexpr size_t kN = 10000;
    std::vector<uint8_t> codes(kN);
    for (size_t i = 0; i < kN; ++i) codes[i] = static_cast<uint8_t>(i % 64);
    const test::HandTensor hand(6, 100, 100, 100, codes, FloatDtype::F16,
                                u16_le(std::vector<uint16_t>(kN / 100, 0x1400)),
                                u16_le(std::vector<uint16_t>(kN / 100, 0x3800)));
    const SourceTensor& t = hand.tensor;
    TensorPlan plan;
    plan.type = GgmlType::F16;
    plan.encoding = Encoding::dequant_f16;
    plan.nbytes = kN * 2;
    EXPECT_EQ(convert_detail::output_unit(plan).bytes, 2u);
    const Chunk chunk{0, 64, kN - 64, 128, (kN - 64) * 2};
    std::vector<uint8_t> out(chunk.out_bytes, 0xAA);
    encode_chunk(t, plan, chunk, out);
    for (size_t i = 64; i < kN; ++i) {
        const uint16_t want = static_cast<uint16_t>(0x3800 + 2 * (i % 64));
        const size_t at = (i - 64) * 2;
        ASSERT_EQ(out[at] | out[at + 1] << 8, want) << i;
    }
}

// A row map (llama q/k) with chunks that start mid-tensor: 4 rows of 32 values, source row s has
// codes s+1, scale 1.0 (0x3c00) and min s (0, 0x3c00, 0x4000, 0x4200), so its values are 2s+1.
// Map {0, 2, 1, 3}: output rows 1 and 2 hold source rows 2 and 1. The same map must hold for the
// Q4_1 repack (d, m and nibbles of the source row) and for the f32 dequant.
TEST(PlanChunkPaths, RowMapMovesWholeRowsInEveryEncoding) {
    std::vector<uint8_t> codes(128);
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i / 32 + 1);
    const test::HandTensor hand(4, 32, 4, 32, codes, FloatDtype::F16,
                                u16_le({0x3c00, 0x3c00, 0x3c00, 0x3c00}),
                                u16_le({0x0000, 0x3c00, 0x4000, 0x4200}));
    TensorPlan plan;
    plan.row_source = {0, 2, 1, 3};
    plan.row_values = 32;

    plan.type = GgmlType::Q4_1;
    plan.encoding = Encoding::q4_1_repack;
    plan.nbytes = 80;
    std::vector<uint8_t> q4(40);
    encode_chunk(hand.tensor, plan, Chunk{0, 64, 64, 40, 40}, q4);  // output rows 2 and 3
    // Row 2 <- source row 1: d 0x3c00, m 0x3c00, nibbles 2; row 3 <- row 3: m 0x4200, nibbles 4.
    EXPECT_EQ(std::vector<uint8_t>(q4.begin(), q4.begin() + 5),
              (std::vector<uint8_t>{0x00, 0x3c, 0x00, 0x3c, 0x22}));
    EXPECT_EQ(std::vector<uint8_t>(q4.begin() + 20, q4.begin() + 25),
              (std::vector<uint8_t>{0x00, 0x3c, 0x00, 0x42, 0x44}));

    plan.type = GgmlType::F32;
    plan.encoding = Encoding::dequant_f32;
    plan.nbytes = 512;
    std::vector<uint8_t> f32(256);
    encode_chunk(hand.tensor, plan, Chunk{0, 32, 64, 128, 256}, f32);  // output rows 1 and 2
    float first_of_row1 = 0, first_of_row2 = 0;
    std::memcpy(&first_of_row1, f32.data(), 4);
    std::memcpy(&first_of_row2, f32.data() + 128, 4);
    EXPECT_EQ(first_of_row1, 5.0f);  // source row 2: 3 * 1 + 2
    EXPECT_EQ(first_of_row2, 3.0f);  // source row 1: 2 * 1 + 1
}

}  // namespace
}  // namespace rebox
