// verify's own reading of ModelOpt NVFP4 / compressed-tensors FP4 checkpoints (nvidia_fp4_index):
// the layout from hf_quant_config.json or config.json, the bound entry (codes, scale bytes, the
// factor verbatim or fl32(1/g) with its error), problems for refused scale bytes and shapes, and
// verify's own table of which graphs apply a .scale.
#include "verify/sources/nvidia_fp4_index.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "source/mcq_test_writer.hpp"
#include "test_files.hpp"

namespace rebox::test {
namespace {

const std::string kQ = "model.layers.0.self_attn.q_proj";

std::vector<uint8_t> f32_bytes(float value) {
    std::vector<uint8_t> b(4);
    std::memcpy(b.data(), &value, 4);
    return b;
}

// A one-module checkpoint (2 x 64) of `layout` in dir; scale bytes `scale`, factor `factor`.
void write_dir(const std::filesystem::path& dir, const std::string& layout, uint8_t scale,
               float factor) {
    const bool mx = layout == "ct-mxfp4";
    std::vector<StTensor> tensors = {{kQ + (layout == "modelopt" ? ".weight" : ".weight_packed"),
                                      "U8",
                                      {2, 32},
                                      std::vector<uint8_t>(64, 0x21)},
                                     {kQ + ".weight_scale",
                                      mx ? "U8" : "F8_E4M3",
                                      {2, mx ? 2 : 4},
                                      std::vector<uint8_t>(mx ? 4 : 8, scale)}};
    nlohmann::json config = {{"model_type", "qwen3"}};
    if (layout == "modelopt") {
        tensors.push_back({kQ + ".weight_scale_2", "F32", {}, f32_bytes(factor)});
        std::ofstream(dir / "hf_quant_config.json")
            << R"({"quantization": {"quant_algo": "NVFP4", "group_size": 16}})";
    } else {
        if (!mx) tensors.push_back({kQ + ".weight_global_scale", "F32", {1}, f32_bytes(factor)});
        config["quantization_config"] = {
            {"quant_method", "compressed-tensors"},
            {"format", mx ? "mxfp4-pack-quantized" : "nvfp4-pack-quantized"}};
    }
    std::ofstream(dir / "config.json") << config.dump();
    write_safetensors(dir / "model.safetensors", tensors, {});
}

struct Indexed {
    ScratchDir dir{"verify-nvidia-fp4"};
    std::optional<verify_ref::NvidiaFp4Layout> layout;
    std::unique_ptr<SafetensorsModel> model;
    verify_ref::SourceIndex index;

    Indexed(const std::string& which, uint8_t scale = 0x38, float factor = 0.5f) {
        write_dir(dir.path(), which, scale, factor);
        layout = verify_ref::nvidia_fp4_layout(dir.path());
        model = std::make_unique<SafetensorsModel>(SafetensorsModel::open(dir.path()));
        if (layout) index = verify_ref::index_nvidia_fp4_source(*model, *layout);
    }
    const verify_ref::SourceTensor& entry() const {
        return index.entries.at(index.by_stripped_name.at("layers.0.self_attn.q_proj.weight"));
    }
};

TEST(VerifyNvidiaFp4Index, ModelOpt) {
    Indexed m("modelopt", 0x38, 3.0e-5f);
    ASSERT_EQ(m.layout, verify_ref::NvidiaFp4Layout::modelopt_nvfp4);
    const auto& e = m.entry();
    EXPECT_TRUE(e.problem.empty()) << e.problem;
    EXPECT_TRUE(e.fp4);
    EXPECT_TRUE(e.fp4_source.nvfp4);
    EXPECT_EQ(e.fp4_source.group, 16u);
    EXPECT_EQ(e.shape, (std::vector<int64_t>{2, 64}));
    EXPECT_TRUE(e.has_scale2);
    EXPECT_EQ(e.scale2, 3.0e-5f);
    EXPECT_EQ(e.scale2_error, 0.0);
}

TEST(VerifyNvidiaFp4Index, CompressedTensors) {
    Indexed nv("ct-nvfp4", 0x38, 3.0f);
    ASSERT_EQ(nv.layout, verify_ref::NvidiaFp4Layout::ct_nvfp4);
    EXPECT_EQ(nv.entry().scale2, 1.0f / 3.0f);
    EXPECT_GT(nv.entry().scale2_error, 0.0);
    Indexed mx("ct-mxfp4", 0x7f);
    ASSERT_EQ(mx.layout, verify_ref::NvidiaFp4Layout::ct_mxfp4);
    EXPECT_TRUE(mx.entry().problem.empty()) << mx.entry().problem;
    EXPECT_FALSE(mx.entry().fp4_source.nvfp4);
    EXPECT_FALSE(mx.entry().has_scale2);
}

TEST(VerifyNvidiaFp4Index, RefusedBytesAreProblems) {
    EXPECT_NE(Indexed("modelopt", 0x7f).entry().problem.find("scale byte 0x7f"), std::string::npos);
    EXPECT_NE(Indexed("ct-nvfp4", 0x80).entry().problem.find("scale byte 0x80"), std::string::npos);
    EXPECT_NE(Indexed("ct-mxfp4", 0xff).entry().problem.find("scale byte 0xff"), std::string::npos);
    EXPECT_NE(Indexed("modelopt", 0x38, -1.0f).entry().problem.find("weight_scale_2"),
              std::string::npos);
}

TEST(VerifyNvidiaFp4Index, WhichGraphsApplyTheScale) {
    using verify_ref::ref_graph_applies_scale;
    EXPECT_TRUE(ref_graph_applies_scale("qwen3", "blk.3.ffn_down.weight"));
    EXPECT_TRUE(ref_graph_applies_scale("llama", "blk.0.ffn_up_exps.weight"));
    EXPECT_TRUE(ref_graph_applies_scale("qwen2", "blk.0.attn_v.weight"));
    EXPECT_TRUE(ref_graph_applies_scale("qwen2", "output.weight"));
    EXPECT_FALSE(ref_graph_applies_scale("qwen2", "blk.0.ffn_down.weight"));
    EXPECT_FALSE(ref_graph_applies_scale("qwen3moe", "blk.0.ffn_down.weight"));
    EXPECT_FALSE(ref_graph_applies_scale("llama", "token_embd.weight"));
    EXPECT_FALSE(ref_graph_applies_scale("gemma2", "blk.0.ffn_gate.weight"));
}

}  // namespace
}  // namespace rebox::test
