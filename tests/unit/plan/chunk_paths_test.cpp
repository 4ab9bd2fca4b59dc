// The plan's new per-tensor decisions reach the bytes: encode_chunk (convert's dispatcher) honours
// zero_code_groups_get_zero_scale for BF16 scales and writes dequant_f16 chunks larger than its
// internal buffer. Expected bytes are worked by hand from the binary16/bfloat16 layouts.
#include <gtest/gtest.h>

#include <vector>

#include "../../../src/convert/chunk_encoder.hpp"
#include "hand_tensor.hpp"
#include "quant_test_bytes.hpp"
#include "rebox/encode/block_encode.hpp"
#include "rebox/error.hpp"
#include "rebox/format/ggml_type.hpp"

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
    plan.type = static_cast<uint32_t>(GgmlType::Q4_1);
    plan.encoding = Encoding::q4_1_repack;
    plan.nbytes = 40;
    const Chunk chunk{0, 0, 64, 0, 40};
    std::vector<uint8_t> out(40);
    EXPECT_THROW(encode_chunk(t, plan, chunk, out), Error);  // flag not set: exact rule
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
    plan.type = static_cast<uint32_t>(GgmlType::F16);
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

}  // namespace
}  // namespace rebox
