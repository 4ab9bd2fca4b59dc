// Plain float checkpoints at the source stage: the dispatcher picks "float" only when nothing says
// quantized (no mcq metadata, no MLX config or .scales/.biases, no stray .qcodes), every
// F32/F16/BF16 tensor keeps its dtype and bytes, any other dtype is one Blocker naming tensor and
// dtype; and an MLX checkpoint's unquantized Linear (override false, no .scales) stays a float
// tensor beside the quantized ones.
#include "source/float_reader.hpp"

#include <gtest/gtest.h>

#include "source/mlx_test_writer.hpp"
#include "source/read_source.hpp"
#include "test_files.hpp"

namespace rebox::test {
namespace {

MlxDir float_dir() {
    MlxDir dir;
    dir.config = {{"model_type", "qwen3"}, {"torch_dtype", "bfloat16"}};
    dir.plain("model.layers.0.mlp.down_proj.weight", "BF16", {4, 128});
    dir.plain("model.layers.0.mlp.up_proj.weight", "F16", {128, 4});
    dir.plain("model.norm.weight", "F32", {128});
    return dir;
}

TEST(FloatReader, DispatchesPlainFloatCheckpointsToTheFloatAdapter) {
    ScratchDir dir("float-dispatch");
    float_dir().write(dir.path());
    EXPECT_EQ(detect_source_format(dir.path()), "float");
    const SourceModel model = read_source_model(dir.path());
    EXPECT_EQ(model.format, "float");
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    ASSERT_EQ(model.tensors.size(), 3u);
    EXPECT_EQ(model.tensors[0].name, "model.layers.0.mlp.down_proj.weight");
    EXPECT_EQ(model.tensors[0].float_dtype, FloatDtype::BF16);
    EXPECT_EQ(model.tensors[0].float_data.size(), 4u * 128 * 2);
    EXPECT_EQ(model.tensors[1].float_dtype, FloatDtype::F16);
    EXPECT_EQ(model.tensors[2].float_dtype, FloatDtype::F32);
    EXPECT_EQ(model.tensors[2].float_data.size(), 128u * 4);
    for (const SourceTensor& t : model.tensors) EXPECT_FALSE(t.is_quantized()) << t.name;
}

TEST(FloatReader, StrayQuantizedPartsStillGoToTheMcqReader) {
    ScratchDir dir("float-stray");
    MlxDir stray = float_dir();
    stray.plain("model.layers.0.mlp.gate_proj.weight.qcodes", "F16", {8});
    stray.write(dir.path());
    EXPECT_EQ(detect_source_format(dir.path()), "mcq-v1");
}

TEST(FloatReader, UnsupportedDtypeIsOneBlockerNamingTensorAndDtype) {
    ScratchDir dir("float-dtype");
    MlxDir bad = float_dir();
    bad.tensors.push_back({"model.layers.0.self_attn.q_proj.weight",
                           "F8_E4M3",
                           {4, 8},
                           std::vector<uint8_t>(32, 0x38)});
    bad.tensors.push_back({"model.rotary.inv_freq", "I64", {2}, std::vector<uint8_t>(16, 0)});
    bad.write(dir.path());
    const SourceModel model = read_float_model(*ModelDir::open(dir.path()));
    ASSERT_EQ(model.blockers.size(), 2u);
    EXPECT_EQ(model.blockers[0].tensor, "model.layers.0.self_attn.q_proj.weight");
    EXPECT_NE(model.blockers[0].reason.find("dtype F8_E4M3"), std::string::npos)
        << model.blockers[0].reason;
    EXPECT_EQ(model.blockers[1].tensor, "model.rotary.inv_freq");
    EXPECT_NE(model.blockers[1].reason.find("dtype I64"), std::string::npos);
    EXPECT_EQ(model.blockers[0].reason.find('\n'), std::string::npos);
    EXPECT_EQ(model.tensors.size(), 3u);  // the float ones are still read
}

TEST(FloatReader, MlxUnquantizedLinearStaysFloatBesideQuantizedOnes) {
    // mlx-lm leaves a module unquantized by listing it as false (or by its shape): its .weight is
    // a plain float tensor with no .scales.
    ScratchDir dir("mlx-mixed-float");
    MlxDir mlx;
    mlx.quant("model.layers.0.mlp.down_proj", 4, std::vector<uint32_t>(4 * 16, 0x76543210u), 2);
    mlx.plain("model.layers.0.mlp.up_proj.weight", "BF16", {128, 4});
    mlx.config["quantization"]["model.layers.0.mlp.up_proj"] = false;
    mlx.write(dir.path());
    const SourceModel model = read_source_model(dir.path());
    EXPECT_EQ(model.format, "mlx");
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    ASSERT_EQ(model.tensors.size(), 2u);
    EXPECT_TRUE(model.tensors[0].is_quantized());
    EXPECT_EQ(model.tensors[1].name, "model.layers.0.mlp.up_proj.weight");
    EXPECT_FALSE(model.tensors[1].is_quantized());
    EXPECT_EQ(model.tensors[1].float_dtype, FloatDtype::BF16);
}

}  // namespace
}  // namespace rebox::test
