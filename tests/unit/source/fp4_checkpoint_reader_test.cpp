// The ModelOpt NVFP4 and compressed-tensors nvfp4 / mxfp4 readers on small hand-built directories:
// the format dispatcher, the Fp4View (codes, scale bytes, the per-tensor factor kept verbatim or
// fl32(1/g) with its error), excluded float modules, and the refusals (NaN / negative scale bytes,
// E8M0 0xFF, shapes and dtypes that disagree, a missing or non-positive factor, FP8 ModelOpt).
#include "source/fp4_checkpoint_reader.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "rebox/error.hpp"
#include "source/mcq_test_writer.hpp"
#include "source/read_source.hpp"
#include "test_files.hpp"

namespace rebox::test {
namespace {

const std::string kQ = "model.layers.0.self_attn.q_proj";

std::vector<uint8_t> f32_bytes(float value) {
    std::vector<uint8_t> b(4);
    std::memcpy(b.data(), &value, 4);
    return b;
}

struct Fp4Dir : StTensorList {
    std::string layout;  // modelopt | ct-nvfp4 | ct-mxfp4
    nlohmann::json quant_side = {{"quantization", {{"quant_algo", "NVFP4"}, {"group_size", 16}}}};

    // One module of 2 rows x 64 columns: codes 0x21 (element 0 = 1, element 1 = 2), scales `scale`.
    explicit Fp4Dir(std::string which, uint8_t scale = 0x38, float factor = 0.5f) : layout(which) {
        const bool mx = layout == "ct-mxfp4";
        const int64_t groups = mx ? 2 : 4;
        tensors.push_back({kQ + (layout == "modelopt" ? ".weight" : ".weight_packed"),
                           "U8",
                           {2, 32},
                           std::vector<uint8_t>(64, 0x21)});
        tensors.push_back({kQ + ".weight_scale",
                           mx ? "U8" : "F8_E4M3",
                           {2, groups},
                           std::vector<uint8_t>(static_cast<size_t>(2 * groups), scale)});
        if (layout == "modelopt") {
            tensors.push_back({kQ + ".weight_scale_2", "F32", {}, f32_bytes(factor)});
            tensors.push_back({kQ + ".input_scale", "F32", {}, f32_bytes(0.25f)});
        } else if (layout == "ct-nvfp4") {
            tensors.push_back({kQ + ".weight_global_scale", "F32", {1}, f32_bytes(factor)});
        }
        tensors.push_back({"model.norm.weight", "BF16", {64}, std::vector<uint8_t>(128, 0)});
    }

    void write(const std::filesystem::path& dir) const {
        nlohmann::json config = {{"model_type", "qwen3"}};
        if (layout == "modelopt") {
            std::ofstream(dir / "hf_quant_config.json") << quant_side.dump();
        } else {
            const std::string format =
                layout == "ct-mxfp4" ? "mxfp4-pack-quantized" : "nvfp4-pack-quantized";
            config["quantization_config"] = {
                {"quant_method", "compressed-tensors"},
                {"config_groups", {{"group_0", {{"format", format}, {"weights", {}}}}}}};
        }
        std::ofstream(dir / "config.json") << config.dump(2);
        write_safetensors(dir / "model.safetensors", tensors, {});
    }
};

SourceModel read(const Fp4Dir& fp4) {
    ScratchDir dir("fp4-checkpoint-reader");
    fp4.write(dir.path());
    return read_source_model(dir.path());
}

void expect_blocker(const SourceModel& model, const std::string& text) {
    ASSERT_FALSE(model.blockers.empty());
    EXPECT_EQ(model.blockers[0].tensor, kQ + ".weight");
    EXPECT_NE(model.blockers[0].reason.find(text), std::string::npos) << model.blockers[0].reason;
    for (const SourceTensor& t : model.tensors) EXPECT_FALSE(t.fp4) << t.name;
}

const SourceTensor& only_fp4(const SourceModel& model) {
    for (const SourceTensor& t : model.tensors)
        if (t.fp4) return t;
    throw std::runtime_error("no FP4 tensor");
}

TEST(Fp4CheckpointReader, ModelOptKeepsWeightScale2Verbatim) {
    const SourceModel model = read(Fp4Dir("modelopt", 0x38, 3.0e-5f));
    EXPECT_EQ(model.format, "modelopt");
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    ASSERT_EQ(model.tensors.size(), 2u);  // the module and the norm; input_scale is a part
    const SourceTensor& t = only_fp4(model);
    EXPECT_EQ(t.name, kQ + ".weight");
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 64}));
    EXPECT_EQ(t.fp4->kind, Fp4Kind::nvfp4);
    EXPECT_EQ(t.fp4->group, 16);
    EXPECT_EQ(t.fp4->codes.size(), 64u);
    EXPECT_EQ(t.fp4->codes[0], 0x21);
    EXPECT_EQ(t.fp4->scales.size(), 8u);
    ASSERT_TRUE(t.fp4->scale2);
    EXPECT_EQ(*t.fp4->scale2, 3.0e-5f);
    EXPECT_FALSE(t.fp4->scale2_inexact);
}

TEST(Fp4CheckpointReader, ModelOptExcludedModuleIsFloat) {
    Fp4Dir fp4("modelopt");
    fp4.tensors.push_back(
        {"model.embed_tokens.weight", "BF16", {4, 64}, std::vector<uint8_t>(512)});
    const SourceModel model = read(fp4);
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    ASSERT_EQ(model.tensors.size(), 3u);
    EXPECT_FALSE(model.tensors[2].is_quantized());
}

TEST(Fp4CheckpointReader, ModelOptKvCacheScalesAreLeftOut) {
    Fp4Dir fp4("modelopt");
    fp4.tensors.push_back(
        {"model.layers.0.self_attn.k_proj.weight", "BF16", {2, 64}, std::vector<uint8_t>(256)});
    fp4.tensors.push_back({"model.layers.0.self_attn.k_proj.k_scale", "F32", {}, f32_bytes(2.0f)});
    const SourceModel model = read(fp4);
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    for (const SourceTensor& t : model.tensors) EXPECT_FALSE(t.name.ends_with("k_scale"));
    Fp4Dir stray("modelopt");  // a k_scale without its module's weight is still refused
    stray.tensors.push_back(
        {"model.layers.0.self_attn.v_proj.v_scale", "F32", {}, f32_bytes(2.0f)});
    ASSERT_EQ(read(stray).blockers.size(), 1u);
}

TEST(Fp4CheckpointReader, CompressedTensorsNvfp4StoresTheReciprocal) {
    const SourceModel model = read(Fp4Dir("ct-nvfp4", 0x38, 53760.0f));
    EXPECT_EQ(model.format, "compressed-tensors");
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    const SourceTensor& t = only_fp4(model);
    ASSERT_TRUE(t.fp4->scale2);
    EXPECT_EQ(*t.fp4->scale2, 1.0f / 53760.0f);
    EXPECT_TRUE(t.fp4->scale2_inexact);  // 53760 = 2^9 * 105: 1/105 has no finite binary form
    EXPECT_GT(t.fp4->scale2_error, 0.0);
    EXPECT_LT(t.fp4->scale2_error, 0x1p-24);
    // a power of two has an exact reciprocal
    const SourceModel exact_model = read(Fp4Dir("ct-nvfp4", 0x38, 256.0f));
    const SourceTensor& exact = only_fp4(exact_model);
    EXPECT_EQ(*exact.fp4->scale2, 1.0f / 256.0f);
    EXPECT_FALSE(exact.fp4->scale2_inexact);
}

TEST(Fp4CheckpointReader, CompressedTensorsMxfp4) {
    const SourceModel model = read(Fp4Dir("ct-mxfp4", 120));
    ASSERT_TRUE(model.blockers.empty()) << model.blockers[0].reason;
    const SourceTensor& t = only_fp4(model);
    EXPECT_EQ(t.fp4->kind, Fp4Kind::mxfp4);
    EXPECT_EQ(t.fp4->group, 32);
    EXPECT_EQ(t.fp4->scales.size(), 4u);
    EXPECT_FALSE(t.fp4->scale2);
}

TEST(Fp4CheckpointReader, RefusedScaleBytes) {
    expect_blocker(read(Fp4Dir("modelopt", 0x7f)), "E4M3 0x7f/0xff is NaN");
    expect_blocker(read(Fp4Dir("modelopt", 0xff)), "E4M3 0x7f/0xff is NaN");
    expect_blocker(read(Fp4Dir("ct-nvfp4", 0xb8)), "sign bit set is negative");
    expect_blocker(read(Fp4Dir("ct-mxfp4", 0xff)), "E8M0 0xff is NaN");
    EXPECT_TRUE(read(Fp4Dir("ct-mxfp4", 0x80)).blockers.empty());  // E8M0 has no sign bit
}

TEST(Fp4CheckpointReader, ShapesAndDtypesThatDisagree) {
    Fp4Dir narrow("modelopt");
    narrow.part(kQ + ".weight_scale").shape = {2, 3};
    narrow.part(kQ + ".weight_scale").data.resize(6);
    expect_blocker(read(narrow), "(expected [2, 4]");
    Fp4Dir mx_shape("ct-mxfp4");
    mx_shape.part(kQ + ".weight_scale").shape = {1, 4};
    expect_blocker(read(mx_shape), "(expected [2, 2]");
    Fp4Dir f16("modelopt");
    f16.part(kQ + ".weight_scale").dtype = "F16";
    f16.part(kQ + ".weight_scale").shape = {2, 2};
    expect_blocker(read(f16), "dtype F16");
    Fp4Dir u32("ct-nvfp4");
    u32.part(kQ + ".weight_packed").dtype = "U32";
    u32.part(kQ + ".weight_packed").shape = {2, 8};
    expect_blocker(read(u32), "expected U8 [out, in/2]");
}

TEST(Fp4CheckpointReader, TheFactorMustBeThereAndPositive) {
    Fp4Dir missing("modelopt");
    missing.tensors.erase(missing.tensors.begin() + 2);
    expect_blocker(read(missing), "missing " + kQ + ".weight_scale_2");
    expect_blocker(read(Fp4Dir("modelopt", 0x38, 0.0f)), "expected a finite positive");
    expect_blocker(read(Fp4Dir("ct-nvfp4", 0x38, -2.0f)), "expected a finite positive");
    Fp4Dir wide("ct-nvfp4");
    wide.part(kQ + ".weight_global_scale").shape = {2};
    wide.part(kQ + ".weight_global_scale").data.resize(8);
    expect_blocker(read(wide), "expected one F32 value per tensor");
}

// compressed-tensors mixed-precision (unsloth's NVFP4 uploads: an FP8 channel group beside the
// NVFP4 one, in either order): the NVFP4 modules are read, and each FP8 module is one BLOCKER on
// its weight (not one on the weight and another on its stray scale).
TEST(Fp4CheckpointReader, CompressedTensorsMixedPrecisionBlocksEachFp8Module) {
    for (const bool fp8_group_first : {true, false}) {
        Fp4Dir fp4("ct-nvfp4");
        const std::string k = "model.layers.0.self_attn.k_proj";
        const std::string v = "model.layers.0.self_attn.v_proj";
        for (const std::string& module : {k, v}) {
            fp4.tensors.push_back(
                {module + ".weight", "F8_E4M3", {2, 64}, std::vector<uint8_t>(128, 0x38)});
            fp4.tensors.push_back({module + ".weight_scale",
                                   "BF16",
                                   {2, 1},
                                   std::vector<uint8_t>{0x80, 0x3f, 0x00, 0x40}});
        }
        ScratchDir dir("fp4-checkpoint-reader-mixed");
        fp4.write(dir.path());
        nlohmann::json config = nlohmann::json::parse(std::ifstream(dir.path() / "config.json"));
        const nlohmann::json fp8 = {
            {"format", "float-quantized"},
            {"targets", {"re:.*k_proj", "re:.*v_proj"}},
            {"weights", {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"}}}};
        const nlohmann::json nvfp4 = config["quantization_config"]["config_groups"]["group_0"];
        config["quantization_config"]["format"] = "mixed-precision";
        config["quantization_config"]["config_groups"] =
            fp8_group_first ? nlohmann::json{{"group_0", fp8}, {"group_1", nvfp4}}
                            : nlohmann::json{{"group_0", nvfp4}, {"group_1", fp8}};
        std::ofstream(dir.path() / "config.json") << config.dump(2);
        const SourceModel model = read_source_model(dir.path());
        EXPECT_EQ(model.format, "compressed-tensors");
        ASSERT_EQ(model.blockers.size(), 2u) << model.blockers[0].reason;
        EXPECT_EQ(model.blockers[0].tensor, k + ".weight");
        EXPECT_EQ(model.blockers[1].tensor, v + ".weight");
        for (const Blocker& b : model.blockers) {
            EXPECT_NE(b.reason.find("is F8_E4M3 [2, 64] with"), std::string::npos) << b.reason;
            EXPECT_NE(b.reason.find("mixed-precision checkpoint (FP8 beside NVFP4)"),
                      std::string::npos)
                << b.reason;
            EXPECT_NE(b.fix.find("BF16 or all-FP8 release"), std::string::npos) << b.fix;
        }
        EXPECT_EQ(only_fp4(model).name, kQ + ".weight");
    }
}

// A float weight of a compressed-tensors checkpoint with a quantization part beside it but no
// weight_packed: the part is a stray one, as before mixed-precision checkpoints were read.
TEST(Fp4CheckpointReader, CompressedTensorsStrayScaleBesideAFloatWeight) {
    Fp4Dir fp4("ct-nvfp4");
    fp4.tensors.push_back(
        {"model.layers.0.mlp.up_proj.weight", "BF16", {2, 64}, std::vector<uint8_t>(256, 0)});
    fp4.tensors.push_back({"model.layers.0.mlp.up_proj.weight_scale",
                           "F8_E4M3",
                           {2, 4},
                           std::vector<uint8_t>(8, 0x38)});
    const SourceModel model = read(fp4);
    ASSERT_EQ(model.blockers.size(), 1u);
    EXPECT_EQ(model.blockers[0].tensor, "model.layers.0.mlp.up_proj.weight_scale");
    EXPECT_NE(model.blockers[0].reason.find("has no quantized weight beside it"),
              std::string::npos);
}

// ModelOpt's mixed-precision export (NVFP4 and FP8 modules in one checkpoint) stops the run; its
// pure FP8 export is read by the FP8 reader (Fp8Convert.CompressedTensorsChannelAndBlockScales).
TEST(Fp4CheckpointReader, ModelOptOtherAlgorithmsStop) {
    Fp4Dir mixed("modelopt");
    mixed.quant_side["quantization"]["quant_algo"] = "MIXED_PRECISION";
    EXPECT_THROW(read(mixed), Error);
}

}  // namespace
}  // namespace rebox::test
