// diff_gguf's value comparison on types beyond Q4_0..Q8_0: two files written here hold Q4_K and
// MXFP4 tensors whose blocks differ in one code; the differences and their sizes are worked out by
// hand from ggml's block layouts (ggml-common.h, dequantize_row_q4_K / _mxfp4), and a Q4_K tensor
// whose bytes differ only in a sub-block of scale 0 holds the same values.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "format/gguf_layout.hpp"
#include "gguf_tools/gguf_diff.hpp"
#include "rebox/ggml_type.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

// block_q4_K with d = 2, dmin = 1, sub-block 0 at scale 3 and min 5, the rest at 0; value 0 is
// 2*3*q0 - 5 and value 32 (sub-block 1, the high nibble of qs[0]) is 0 whatever its code.
std::vector<uint8_t> q4_k_block(uint8_t q0, uint8_t q32) {
    std::vector<uint8_t> b(144, 0);
    b[1] = 0x40, b[3] = 0x3C;  // d = 2.0, dmin = 1.0
    b[4] = 3, b[8] = 5;
    b[16] = static_cast<uint8_t>(q32 << 4 | q0);
    return b;
}

// block_mxfp4 with e = 129 (scale 2): value 0 is kvalues_mxfp4[q0] * 2.
std::vector<uint8_t> mxfp4_block(uint8_t q0) {
    std::vector<uint8_t> b(17, 0);
    b[0] = 129;
    b[1] = q0;
    return b;
}

void write(const std::filesystem::path& path, const std::vector<std::vector<uint8_t>>& data) {
    GgufLayout layout;
    layout.add_tensor("k", {256}, GgmlType::Q4_K);
    layout.add_tensor("k_same", {256}, GgmlType::Q4_K);
    layout.add_tensor("m", {32}, GgmlType::MXFP4);
    write_gguf(
        path, layout,
        [&](size_t i, std::span<uint8_t> out) {
            ASSERT_EQ(out.size(), data[i].size());
            std::memcpy(out.data(), data[i].data(), out.size());
        },
        true);
}

const TensorComparison& find(const GgufDiff& diff, const std::string& name) {
    for (const TensorComparison& t : diff.tensors)
        if (t.name == name) return t;
    throw std::runtime_error("no comparison of " + name);
}

TEST(DiffValues, KQuantAndMxfp4DifferencesAreMeasured) {
    const test::ScratchDir dir;
    write(dir / "a.gguf", {q4_k_block(7, 0), q4_k_block(7, 1), mxfp4_block(7)});
    write(dir / "b.gguf", {q4_k_block(9, 0), q4_k_block(7, 15), mxfp4_block(6)});
    const GgufDiff diff = diff_gguf(dir / "a.gguf", dir / "b.gguf");
    EXPECT_FALSE(diff.same());

    const TensorComparison& k = find(diff, "k");
    EXPECT_EQ(k.verdict, TensorComparison::Verdict::different);
    EXPECT_EQ(k.differing_values, 1u);
    EXPECT_EQ(k.max_abs_error, 12.0);  // 2*3*9 - 5 = 49 against 2*3*7 - 5 = 37

    const TensorComparison& same = find(diff, "k_same");
    EXPECT_EQ(same.verdict, TensorComparison::Verdict::same_values);  // scale 0: both 0
    EXPECT_EQ(same.differing_values, 0u);

    const TensorComparison& m = find(diff, "m");
    EXPECT_EQ(m.verdict, TensorComparison::Verdict::different);
    EXPECT_EQ(m.differing_values, 1u);
    EXPECT_EQ(m.max_abs_error, 8.0);  // 12 * 2 against 8 * 2
}

}  // namespace
}  // namespace rebox
