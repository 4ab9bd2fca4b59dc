// read_mlx_model on small hand-built MLX directories: config rules (mode, bits, group, overrides,
// aliases), shape checks against the config (never inference), stray or missing parts, stacked
// experts (switch_mlp [E, rows, words]), the source-format dispatcher, and the FP4 modes
// (mxfp4 / nvfp4: the view, mode against bits/group, stray biases, dtypes, shapes, refused
// scale bytes).
#include "source/mlx_reader.hpp"

#include <gtest/gtest.h>

#include "source/mlx_fp4_module.hpp"
#include "source/mlx_test_writer.hpp"
#include "source/read_source.hpp"
#include "test_files.hpp"

namespace rebox::test {
namespace {

const std::string kDown = "model.layers.0.mlp.down_proj";

// 4 rows of 128 columns at 4 bits / group 64: 16 words per row, 2 groups per row.
MlxDir four_bit_dir() {
    MlxDir mlx;
    mlx.quant(kDown, 4, std::vector<uint32_t>(4 * 16, 0x76543210u), 2);
    mlx.plain("model.norm.weight", "BF16", {128});
    return mlx;
}

SourceModel read(const MlxDir& mlx) {
    ScratchDir dir("mlx-reader");
    mlx.write(dir.path());
    return read_mlx_model(*ModelDir::open(dir.path()));
}

// The one blocker the model must carry, naming `tensor` and containing `text`.
void expect_blocker(const SourceModel& model, const std::string& tensor, const std::string& text) {
    ASSERT_EQ(model.blockers.size(), 1u)
        << (model.blockers.size() > 1 ? model.blockers[1].reason : std::string("none"));
    EXPECT_EQ(model.blockers[0].tensor, tensor);
    EXPECT_NE(model.blockers[0].reason.find(text), std::string::npos) << model.blockers[0].reason;
    EXPECT_FALSE(model.blockers[0].fix.empty());
    for (const SourceTensor& t : model.tensors) EXPECT_FALSE(t.is_quantized()) << t.name;
}

TEST(MlxReader, ReadsAQuantizedModuleAndFloatTensors) {
    MlxDir mlx = four_bit_dir();
    mlx.plain("model.layers.0.self_attn.q_proj.bias", "BF16", {8});  // a layer bias, singular
    const SourceModel model = read(mlx);
    EXPECT_EQ(model.format, "mlx");
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    ASSERT_EQ(model.tensors.size(), 3u);
    const SourceTensor& w = model.tensors[0];
    EXPECT_EQ(w.name, kDown + ".weight");
    EXPECT_EQ(w.shape, (std::vector<int64_t>{4, 128}));
    ASSERT_TRUE(w.quant);
    EXPECT_EQ(w.quant->bits, 4);
    EXPECT_EQ(w.quant->group, 64);
    EXPECT_EQ(w.quant->scale_dtype, FloatDtype::BF16);
    EXPECT_EQ(w.quant->codes.size(), 4u * 16 * 4);
    EXPECT_EQ(w.quant->scales.size(), 4u * 2 * 2);
    EXPECT_EQ(w.quant->mins.size(), 4u * 2 * 2);
    EXPECT_EQ(w.quant->scales[0], 0x30);  // the .scales bytes, not the .biases ones
    EXPECT_EQ(model.tensors[1].name, "model.norm.weight");
    EXPECT_FALSE(model.tensors[1].is_quantized());
    EXPECT_EQ(model.tensors[1].float_dtype, FloatDtype::BF16);
    EXPECT_EQ(model.tensors[2].name, "model.layers.0.self_attn.q_proj.bias");
    EXPECT_FALSE(model.tensors[2].is_quantized());
}

TEST(MlxReader, F16AndF32ScalesKeepTheirDtype) {
    for (const char* dtype : {"F16", "F32"}) {
        MlxDir mlx;
        mlx.quant(kDown, 4, std::vector<uint32_t>(4 * 16, 0), 2, dtype);
        const SourceModel model = read(mlx);
        ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
        EXPECT_EQ(model.tensors[0].quant->scale_dtype,
                  std::string(dtype) == "F16" ? FloatDtype::F16 : FloatDtype::F32);
    }
}

TEST(MlxReader, PerModuleOverrideSetsBitsAndGroup) {
    // 4 rows x 16 words at 8 bits = 64 columns; group 32 -> 2 groups. At the global 4/64 the
    // same words would be 128 columns with 2 groups: only the override makes it 8-bit.
    MlxDir mlx;
    mlx.config["quantization"][kDown] = {{"group_size", 32}, {"bits", 8}};
    mlx.quant(kDown, 4, std::vector<uint32_t>(4 * 16, 0), 2);
    const SourceModel model = read(mlx);
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    EXPECT_EQ(model.tensors[0].shape, (std::vector<int64_t>{4, 64}));
    EXPECT_EQ(model.tensors[0].quant->bits, 8);
    EXPECT_EQ(model.tensors[0].quant->group, 32);
}

TEST(MlxReader, QuantizationConfigAliasAndTextConfigAreFound) {
    MlxDir alias = four_bit_dir();
    alias.config.erase("quantization");
    alias.config["quantization_config"] = {{"group_size", 64}, {"bits", 4}};
    EXPECT_TRUE(read(alias).blockers.empty());
    MlxDir vlm = four_bit_dir();
    vlm.config.erase("quantization");
    vlm.config["text_config"] = {{"quantization", {{"group_size", 64}, {"bits", 4}}}};
    const SourceModel model = read(vlm);
    EXPECT_TRUE(model.blockers.empty());
    EXPECT_TRUE(model.tensors[0].is_quantized());
}

TEST(MlxReader, ShapeDisagreeingWithConfigBitsIsABlocker) {
    // Written at 4 bits / group 64 (16 words, 2 groups per row), config claims 2 bits / group 128:
    // 16 words = 256 columns at 2 bits -> 2 groups of 128, the same scales shape... so also claim
    // group 64 to make the scales shape [4, 4] disagree with the stored [4, 2].
    MlxDir mlx = four_bit_dir();
    mlx.config["quantization"] = {{"group_size", 64}, {"bits", 2}};
    expect_blocker(read(mlx), kDown + ".scales", "expected [4, 4]");
    // 3 bits: 16 words * 32 / 3 is not whole codes.
    MlxDir odd = four_bit_dir();
    odd.config["quantization"]["bits"] = 3;
    expect_blocker(read(odd), kDown + ".weight", "does not hold whole 3-bit codes");
}

TEST(MlxReader, UnknownModeIsABlocker) {
    MlxDir mlx = four_bit_dir();
    mlx.config["quantization"]["mode"] = "mxfp8";
    expect_blocker(read(mlx), "config.json: quantization", "mode 'mxfp8'");
    MlxDir over = four_bit_dir();
    over.config["quantization"][kDown] = {{"group_size", 64}, {"bits", 4}, {"mode", "mxfp8"}};
    expect_blocker(read(over), kDown + ".weight", "mode 'mxfp8'");
    // FP4 modes are read (mlx_fp4_reader_test.cpp), but with mlx's forced group size only.
    MlxDir fp4 = four_bit_dir();
    fp4.config["quantization"]["mode"] = "mxfp4";
    expect_blocker(read(fp4), "config.json: quantization", "group_size 64 with mode mxfp4");
}

TEST(MlxReader, GroupAndBitsOutsideMlxAffineAreBlockers) {
    MlxDir g16 = four_bit_dir();
    g16.config["quantization"]["group_size"] = 16;
    expect_blocker(read(g16), "config.json: quantization", "group_size 16");
    MlxDir b7;
    b7.config["quantization"][kDown] = {{"group_size", 32}, {"bits", 7}};
    b7.quant(kDown, 4, std::vector<uint32_t>(4 * 7, 0), 1);
    expect_blocker(read(b7), kDown + ".weight", "bits 7");
}

TEST(MlxReader, MissingBiasesIsABlocker) {
    MlxDir mlx = four_bit_dir();
    mlx.remove(kDown + ".biases");
    expect_blocker(read(mlx), kDown + ".weight", "no '" + kDown + ".biases'");
}

TEST(MlxReader, BiasesWithoutScalesIsABlocker) {
    MlxDir mlx = four_bit_dir();
    mlx.remove(kDown + ".scales");
    const SourceModel model = read(mlx);
    // One line for the module: the packed weight's, naming the missing scales (its biases add
    // none).
    ASSERT_EQ(model.blockers.size(), 1u);
    EXPECT_EQ(model.blockers[0].tensor, kDown + ".weight");
    EXPECT_NE(model.blockers[0].reason.find("U32"), std::string::npos);
    EXPECT_NE(model.blockers[0].reason.find("no '" + kDown + ".scales'"), std::string::npos)
        << model.blockers[0].reason;
}

// Biases whose module has neither weight nor scales are stray: their own line.
TEST(MlxReader, StrayBiasesAreABlocker) {
    MlxDir mlx = four_bit_dir();
    mlx.remove(kDown + ".scales");
    mlx.remove(kDown + ".weight");
    const SourceModel model = read(mlx);
    ASSERT_EQ(model.blockers.size(), 1u);
    EXPECT_EQ(model.blockers[0].tensor, kDown + ".biases");
    EXPECT_NE(model.blockers[0].reason.find("without"), std::string::npos);
}

TEST(MlxReader, OverrideFalseWithScalesIsABlocker) {
    MlxDir mlx = four_bit_dir();
    mlx.config["quantization"][kDown] = false;
    expect_blocker(read(mlx), kDown + ".weight", "is false");
}

TEST(MlxReader, MismatchedBiasDtypeAndNonU32WeightAreBlockers) {
    MlxDir mixed = four_bit_dir();
    mixed.part(kDown + ".biases").dtype = "F16";
    expect_blocker(read(mixed), kDown + ".biases", "expected BF16");
    MlxDir i32 = four_bit_dir();
    i32.part(kDown + ".weight").dtype = "I32";
    expect_blocker(read(i32), kDown + ".weight", "expected U32");
}

TEST(MlxReader, ScalesWithoutConfigAndGptqConfigAreBlockers) {
    MlxDir none = four_bit_dir();
    none.config.erase("quantization");
    expect_blocker(read(none), "config.json", "cannot be inferred");
    MlxDir gptq = four_bit_dir();
    gptq.config["quantization"]["quant_method"] = "gptq";
    expect_blocker(read(gptq), "config.json: quantization", "gptq");
}

TEST(ReadSource, DispatchesMlxAndMcq) {
    ScratchDir mlx_dir("mlx-dispatch");
    four_bit_dir().write(mlx_dir.path());
    EXPECT_EQ(detect_source_format(mlx_dir.path()), "mlx");
    EXPECT_EQ(read_source_model(mlx_dir.path()).format, "mlx");

    ScratchDir mcq_dir("mcq-dispatch");
    McqFile mcq;
    mcq.quant("layers.0.mlp.down_proj.weight", 4, 64, 4, 128);
    mcq.write(mcq_dir.path() / "model.safetensors");
    // Even with an MLX-looking config, mcq metadata decides.
    std::ofstream(mcq_dir.path() / "config.json")
        << R"({"quantization": {"group_size": 64, "bits": 4}})";
    EXPECT_EQ(detect_source_format(mcq_dir.path()), "mcq-v1");
    EXPECT_EQ(read_source_model(mcq_dir.path()).format, "mcq-v1");
}

}  // namespace
}  // namespace rebox::test

namespace rebox::test {
namespace {

const std::string kSwitch = "model.layers.0.mlp.switch_mlp.up_proj";

// mlx-lm's stacked experts: 3 experts of 2 rows x 128 columns at 4 bits / group 64, i.e. weight
// [3, 2, 16] words and scales/biases [3, 2, 2]; `param_shape` replaces the latter's shape.
MlxDir stacked_dir(std::vector<int64_t> param_shape = {3, 2, 2}) {
    MlxDir mlx;
    mlx.quant(kSwitch, 6, std::vector<uint32_t>(6 * 16, 0x76543210u), 2);
    mlx.tensors[0].shape = {3, 2, 16};
    mlx.tensors[1].shape = param_shape;
    mlx.tensors[2].shape = param_shape;
    return mlx;
}

TEST(MlxReader, StackedExpertsReadAsOneThreeDimensionalTensor) {
    const SourceModel model = read(stacked_dir());
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    ASSERT_EQ(model.tensors.size(), 1u);
    const SourceTensor& w = model.tensors[0];
    EXPECT_EQ(w.shape, (std::vector<int64_t>{3, 2, 128}));
    ASSERT_TRUE(w.quant);
    EXPECT_EQ(w.element_count(), 3u * 2 * 128);
    EXPECT_EQ(w.quant->codes.size(), 6u * 16 * 4);  // every expert's rows, one lsb0 stream
    EXPECT_EQ(w.quant->scales.size(), 6u * 2 * 2);  // 2 groups per row, BF16
}

TEST(MlxReader, StackedExpertsWithFlatScalesOrFourDimsAreRefused) {
    expect_blocker(read(stacked_dir({6, 2})), kSwitch + ".scales", "expected [3, 2, 2]");
    MlxDir four = stacked_dir();
    four.tensors[0].shape = {3, 1, 2, 16};
    expect_blocker(read(four), kSwitch + ".weight", "neither 2-D nor stacked experts");
}

// ---- MLX mode "mxfp4" / "nvfp4" ----

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

TEST(MlxFp4Reader, ScaleByteRule) {
    const std::vector<uint8_t> codes(16);
    const std::vector<uint8_t> mx = {0x00, 0xfe, 0xff};
    EXPECT_EQ(mlx::first_bad_fp4_scale(Fp4View{Fp4Kind::mxfp4, 32, codes, mx}), 2u);
    const std::vector<uint8_t> mx_ok = {0x00, 0x7f, 0xfe};
    EXPECT_FALSE(mlx::first_bad_fp4_scale(Fp4View{Fp4Kind::mxfp4, 32, codes, mx_ok}));
    const std::vector<uint8_t> nv_negative = {0x7e, 0x80};
    EXPECT_EQ(mlx::first_bad_fp4_scale(Fp4View{Fp4Kind::nvfp4, 16, codes, nv_negative}), 1u);
    const std::vector<uint8_t> nv_nan = {0x7f};
    EXPECT_EQ(mlx::first_bad_fp4_scale(Fp4View{Fp4Kind::nvfp4, 16, codes, nv_nan}), 0u);
    const std::vector<uint8_t> nv_ok = {0x00, 0x7e, 0x01};
    EXPECT_FALSE(mlx::first_bad_fp4_scale(Fp4View{Fp4Kind::nvfp4, 16, codes, nv_ok}));
    EXPECT_NE(mlx::fp4_scale_problem(Fp4Kind::nvfp4, 0xff), nullptr);
    EXPECT_EQ(mlx::fp4_scale_problem(Fp4Kind::mxfp4, 0x80), nullptr);  // E8M0 has no sign
}

}  // namespace
}  // namespace rebox::test
