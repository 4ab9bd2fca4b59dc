// read_mlx_model on hand-built MLX mxfp4 / nvfp4 modules: the view (codes, scale bytes, group
// and logical shape [rows, words*8]), and each refusal as one Blocker naming the tensor: mode
// against bits/group, stray biases, dtypes, weight/scales shapes that disagree, refused scale
// bytes.
#include <gtest/gtest.h>

#include "source/mlx_reader.hpp"
#include "source/mlx_test_writer.hpp"
#include "test_files.hpp"

namespace rebox::test {
namespace {

const std::string kQ = "model.layers.0.self_attn.q_proj";

// 2 rows of 64 columns: 8 words per row; scales [2, 64/group] of `scale`.
MlxDir fp4_dir(const std::string& mode, uint8_t scale = 0x30) {
    MlxDir mlx;
    const int64_t group = mode == "nvfp4" ? 16 : 32;
    mlx.config["quantization"] = {{"group_size", group}, {"bits", 4}, {"mode", mode}};
    mlx.tensors.push_back(
        {kQ + ".weight", "U32", {2, 8}, MlxDir::words_le(std::vector<uint32_t>(16, 0x76543210u))});
    mlx.tensors.push_back({kQ + ".scales",
                           "U8",
                           {2, 64 / group},
                           std::vector<uint8_t>(static_cast<size_t>(2 * 64 / group), scale)});
    return mlx;
}

SourceModel read(const MlxDir& mlx) {
    ScratchDir dir("mlx-fp4-reader");
    mlx.write(dir.path());
    return read_mlx_model(*ModelDir::open(dir.path()));
}

void expect_blocker(const SourceModel& model, const std::string& tensor, const std::string& text) {
    ASSERT_EQ(model.blockers.size(), 1u);
    EXPECT_EQ(model.blockers[0].tensor, tensor);
    EXPECT_NE(model.blockers[0].reason.find(text), std::string::npos) << model.blockers[0].reason;
    EXPECT_FALSE(model.blockers[0].fix.empty());
    EXPECT_TRUE(model.tensors.empty());
}

TEST(MlxFp4Reader, ReadsBothModes) {
    for (const std::string mode : {"mxfp4", "nvfp4"}) {
        const SourceModel model = read(fp4_dir(mode));
        ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
        ASSERT_EQ(model.tensors.size(), 1u);
        const SourceTensor& t = model.tensors[0];
        EXPECT_EQ(t.name, kQ + ".weight");
        EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 64}));
        ASSERT_TRUE(t.fp4);
        EXPECT_FALSE(t.quant);
        EXPECT_EQ(t.fp4->kind, mode == "mxfp4" ? Fp4Kind::mxfp4 : Fp4Kind::nvfp4);
        EXPECT_EQ(t.fp4->group, mode == "mxfp4" ? 32 : 16);
        EXPECT_EQ(t.fp4->codes.size(), 64u);
        EXPECT_EQ(t.fp4->codes[0], 0x10);  // little-endian word 0x76543210
        EXPECT_EQ(t.fp4->scales.size(), mode == "mxfp4" ? 4u : 8u);
    }
}

TEST(MlxFp4Reader, ModeAgainstBitsAndGroup) {
    MlxDir bad_group = fp4_dir("nvfp4");
    bad_group.config["quantization"]["group_size"] = 32;
    const SourceModel model = read(bad_group);
    ASSERT_FALSE(model.blockers.empty());
    EXPECT_NE(model.blockers[0].reason.find("group_size 32 with mode nvfp4 (expected 16)"),
              std::string::npos)
        << model.blockers[0].reason;
    EXPECT_TRUE(model.tensors.empty());
}

TEST(MlxFp4Reader, LayoutRefusals) {
    MlxDir biases = fp4_dir("mxfp4");
    biases.tensors.push_back({kQ + ".biases", "BF16", {2, 2}, std::vector<uint8_t>(8, 0)});
    expect_blocker(read(biases), kQ + ".biases", "stores no biases");
    MlxDir f16_scales = fp4_dir("mxfp4");
    f16_scales.tensors[1] = {kQ + ".scales", "F16", {2, 2}, std::vector<uint8_t>(8, 0)};
    expect_blocker(read(f16_scales), kQ + ".scales", "expected U8 E8M0");
    MlxDir wrong_shape = fp4_dir("nvfp4");
    wrong_shape.tensors[1].shape = {2, 2};
    wrong_shape.tensors[1].data.resize(4);
    expect_blocker(read(wrong_shape), kQ + ".scales", "(expected [2, 4]");
    MlxDir u8_weight = fp4_dir("mxfp4");
    u8_weight.tensors[0].dtype = "U8";
    u8_weight.tensors[0].shape = {2, 32};
    expect_blocker(read(u8_weight), kQ + ".weight", "expected U32");
}

TEST(MlxFp4Reader, RefusedScaleBytes) {
    expect_blocker(read(fp4_dir("mxfp4", 0xff)), kQ + ".scales", "E8M0 0xff is NaN");
    expect_blocker(read(fp4_dir("nvfp4", 0x7f)), kQ + ".scales", "E4M3 0x7f/0xff is NaN");
    expect_blocker(read(fp4_dir("nvfp4", 0xb8)), kQ + ".scales", "sign bit set is negative");
    EXPECT_TRUE(read(fp4_dir("mxfp4", 0x80)).blockers.empty());  // E8M0 has no sign bit
}

}  // namespace
}  // namespace rebox::test
