// rebox convert on a multimodal Gemma 3 checkpoint (tools/mkfixture --multimodal: gemma-3-4b-it's
// names, a 2-layer SigLIP tower of width 32): the mmproj file beside the text model, its clip.*
// keys worked out by hand from the fixture's config.json / preprocessor_config.json, its types
// (F32 embeddings and 1-D tensors, the source's float type for the weights, the projection F16
// only where exact), --mmproj PATH, --no-mmproj, and the refusals that leave neither file.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "format/gguf_file.hpp"
#include "format/safetensors.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;

class MmprojConvert : public ::testing::Test {
  protected:
    fs::path make_fixture(const std::string& name, const std::string& flags) {
        const fs::path dir = work_ / name;
        const auto made =
            test::run(quoted(test::mkfixture_cli()) + " " + quoted(dir) +
                      " --preset tiny --tokenizer small --arch gemma3 --multimodal " + flags);
        EXPECT_EQ(made.exit_code, 0) << made.output;
        return dir;
    }
    test::RunResult convert(const fs::path& model, const fs::path& out,
                            const std::string& flags = "") {
        return test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) + " -o " +
                         quoted(out) + " -q " + flags);
    }
    static void edit_json(const fs::path& file,
                          const std::function<void(nlohmann::json&)>& change) {
        nlohmann::json doc = nlohmann::json::parse(test::read_file(file));
        change(doc);
        test::write_file(file, doc.dump(2));
    }
    test::ScratchDir scratch_;
    fs::path work_ = scratch_.path();
};

TEST_F(MmprojConvert, WritesThePairWithTheConvertersKeysAndTypes) {
    const fs::path model = make_fixture("bf16", "--format float");
    const auto run = convert(model, work_ / "g.gguf");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    ASSERT_TRUE(fs::exists(work_ / "g.gguf"));
    const auto mm = GgufFile::open(work_ / "mmproj-g.gguf");
    const auto u32 = [&](const char* key) { return mm->find(key)->as_u32().value_or(0); };
    EXPECT_EQ(*mm->find("general.architecture")->as_string(), "clip");
    EXPECT_EQ(*mm->find("general.type")->as_string(), "mmproj");
    EXPECT_EQ(*mm->find("clip.projector_type")->as_string(), "gemma3");
    EXPECT_EQ(mm->find("clip.has_vision_encoder")->as_bool(), true);
    EXPECT_EQ(mm->find("clip.use_gelu")->as_bool(), true);
    EXPECT_EQ(u32("general.file_type"), 32u);           // MOSTLY_BF16: the weights' type
    EXPECT_EQ(u32("clip.vision.projection_dim"), 64u);  // text_config.hidden_size
    EXPECT_EQ(u32("clip.vision.image_size"), 224u);
    EXPECT_EQ(u32("clip.vision.patch_size"), 14u);
    EXPECT_EQ(u32("clip.vision.embedding_length"), 32u);
    EXPECT_EQ(u32("clip.vision.feed_forward_length"), 64u);
    EXPECT_EQ(u32("clip.vision.block_count"), 2u);
    EXPECT_EQ(u32("clip.vision.attention.head_count"), 2u);
    // (224 / 14) patches per side pooled to sqrt(64) = 8: factor 2 (written since it is not 4).
    EXPECT_EQ(u32("clip.vision.projector.scale_factor"), 2u);
    // Not in the fixture's vision_config: SiglipVisionConfig's 1e-6.
    EXPECT_EQ(mm->find("clip.vision.attention.layer_norm_epsilon")->as_f32(), 1e-6f);
    const GgufValue* mean = mm->find("clip.vision.image_mean");
    ASSERT_NE(mean, nullptr);
    EXPECT_EQ(mean->elem_type, GgufType::FLOAT32);
    EXPECT_EQ(mean->type, GgufType::ARRAY);
    EXPECT_EQ(mm->tensors().size(), 3u + 2 * 16 + 4);
    const auto type_of = [&](const char* name) {
        const GgufTensorInfo* t = mm->find_tensor(name);
        return t ? t->type : static_cast<GgmlType>(999);
    };
    EXPECT_EQ(type_of("v.patch_embd.weight"), GgmlType::F32);
    EXPECT_EQ(type_of("v.position_embd.weight"), GgmlType::F32);
    EXPECT_EQ(type_of("v.blk.1.attn_q.weight"), GgmlType::BF16);
    EXPECT_EQ(type_of("v.blk.1.attn_q.bias"), GgmlType::F32);
    EXPECT_EQ(type_of("v.blk.0.ffn_up.weight"), GgmlType::BF16);
    EXPECT_EQ(type_of("mm.input_projection.weight"), GgmlType::F16);  // BF16 values exact in F16
    EXPECT_EQ(type_of("mm.soft_emb_norm.weight"), GgmlType::F32);
    // soft_emb_norm + 1, a binary32 add of the BF16 value.
    const auto st = SafetensorsFile::open(model / "model.safetensors");
    const StTensorInfo* norm = st->find("multi_modal_projector.mm_soft_emb_norm.weight");
    ASSERT_NE(norm, nullptr);
    const auto source = st->data(*norm);
    const float value =
        std::bit_cast<float>(static_cast<uint32_t>(source[2] | source[3] << 8) << 16);  // element 1
    float written = 0;
    std::memcpy(&written, mm->tensor_data(*mm->find_tensor("mm.soft_emb_norm.weight")).data() + 4,
                4);
    EXPECT_EQ(written, value + 1.0f);
    // The text model holds no vision tensor.
    const auto text = GgufFile::open(work_ / "g.gguf");
    for (const GgufTensorInfo& t : text->tensors()) EXPECT_NE(t.name.rfind("v.", 0), 0u) << t.name;
}

TEST_F(MmprojConvert, F32ProjectionStaysF32WhereF16WouldRound) {
    const fs::path model = make_fixture("mcq", "");  // the tower in F32, the text model 4-bit
    const auto run = convert(model, work_ / "g.gguf", "--mmproj " + quoted(work_ / "v.gguf"));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_FALSE(fs::exists(work_ / "mmproj-g.gguf"));
    const auto mm = GgufFile::open(work_ / "v.gguf");
    EXPECT_EQ(mm->find_tensor("mm.input_projection.weight")->type, GgmlType::F32);
    EXPECT_EQ(mm->find_tensor("v.blk.0.attn_k.weight")->type, GgmlType::F32);
    EXPECT_EQ(mm->find("general.file_type")->as_u32(), 0u);  // ALL_F32
}

TEST_F(MmprojConvert, NoMmprojWritesTheTextModelOnly) {
    const fs::path model = make_fixture("bf16", "--format float");
    const auto run = test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) + " -o " +
                               quoted(work_ / "g.gguf") + " --no-mmproj");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(fs::exists(work_ / "g.gguf"));
    EXPECT_FALSE(fs::exists(work_ / "mmproj-g.gguf"));
    EXPECT_NE(run.output.find("39 vision tower / multimodal projector tensor(s) left out"),
              std::string::npos)
        << run.output;
}

// --modelfile: the text model's FROM, then the projector's (Ollama >= 0.30.4 takes a second FROM
// holding an mmproj as a projector layer; the header says which version).
TEST_F(MmprojConvert, ModelfileNamesBothFiles) {
    const fs::path model = make_fixture("bf16", "--format float");
    const auto run = convert(model, work_ / "g.gguf", "--modelfile");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const std::string text = test::read_file(work_ / "g.Modelfile");
    const size_t text_from = text.find("FROM ./g.gguf\n");
    const size_t projector_from = text.find("FROM ./mmproj-g.gguf\n");
    ASSERT_NE(text_from, std::string::npos) << text;
    ASSERT_NE(projector_from, std::string::npos) << text;
    EXPECT_LT(text_from, projector_from) << text;
    EXPECT_NE(text.find("Ollama >= 0.30.4"), std::string::npos) << text;
}

// rebox verify finds the mmproj beside the text model (or takes --mmproj) and checks its values
// against the source with its own code: a soft_emb_norm left unshifted is refused.
TEST_F(MmprojConvert, VerifyChecksTheMmprojBeside) {
    const fs::path model = make_fixture("bf16", "--format float");
    ASSERT_EQ(convert(model, work_ / "g.gguf").exit_code, 0);
    const std::string verify =
        quoted(test::rebox_cli()) + " verify " + quoted(model) + " " + quoted(work_ / "g.gguf");
    auto run = test::run(verify);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("copied tensors bit-identical: 67/67"), std::string::npos)
        << run.output;  // 28 text + 39 mmproj tensors
    const fs::path mmproj = work_ / "mmproj-g.gguf";
    std::vector<uint8_t> bytes = test::read_file_bytes(mmproj);
    {
        const auto file = GgufFile::open(mmproj);
        const GgufTensorInfo* norm = file->find_tensor("mm.soft_emb_norm.weight");
        ASSERT_NE(norm, nullptr);
        float value = 0;
        const uint64_t at = file->data_offset() + norm->offset;
        std::memcpy(&value, bytes.data() + at, 4);
        value -= 1.0f;  // the source value, without the converter's + 1
        std::memcpy(bytes.data() + at, &value, 4);
    }
    const fs::path moved = work_ / "elsewhere.gguf";
    test::write_file(moved, bytes);
    run = test::run(verify + " --mmproj " + quoted(moved));
    EXPECT_EQ(run.exit_code, 3) << run.output;
    EXPECT_NE(run.output.find("MISMATCH mm.soft_emb_norm.weight"), std::string::npos) << run.output;
}

// Each refusal: one line naming what is wrong, exit 2 (BLOCKER) or 1, and neither file.
TEST_F(MmprojConvert, RefusalsLeaveNeitherFile) {
    const fs::path model = make_fixture("bf16", "--format float");
    const fs::path out = work_ / "g.gguf", mmproj = work_ / "mmproj-g.gguf";
    // The projector's input width (its first dim, 32) against a vision hidden_size of 48.
    edit_json(model / "config.json",
              [](nlohmann::json& c) { c["vision_config"]["hidden_size"] = 48; });
    auto run = convert(model, out);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("multi_modal_projector.mm_input_projection_weight: is [32, 64] "
                              "where the configs say [48, 64]"),
              std::string::npos)
        << run.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(mmproj));
    edit_json(model / "config.json",
              [](nlohmann::json& c) { c["vision_config"]["hidden_size"] = 32; });
    // image_std has no default.
    edit_json(model / "preprocessor_config.json", [](nlohmann::json& c) { c.erase("image_std"); });
    run = convert(model, out);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("preprocessor_config.json: image_std: is missing"), std::string::npos)
        << run.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(mmproj));
    edit_json(model / "preprocessor_config.json", [](nlohmann::json& c) {
        c["image_std"] = {0.5, 0.5, 0.5};
    });
    // An mmproj already there (no --force): the text model is not written either.
    test::write_file(mmproj, std::string("old"));
    run = convert(model, out);
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(test::read_file(mmproj), "old");
    fs::remove(mmproj);
    // --mmproj on a checkpoint without a vision tower.
    const fs::path text_only = work_ / "text";
    ASSERT_EQ(test::run(quoted(test::mkfixture_cli()) + " " + quoted(text_only) +
                        " --preset tiny --tokenizer small --arch gemma3 --format float")
                  .exit_code,
              0);
    run = convert(text_only, out, "--mmproj " + quoted(mmproj));
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_NE(run.output.find("no vision tower"), std::string::npos) << run.output;
    EXPECT_FALSE(fs::exists(out));
    // Now it converts: both files.
    run = convert(model, out);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(fs::exists(out));
    EXPECT_TRUE(fs::exists(mmproj));
}

// convert --quantize: the text model quantized, the projector written exactly beside it (as
// llama-quantize leaves the converter's mmproj file): byte for byte the exact conversion's mmproj,
// both verified before either is committed; an mmproj already there refuses both.
TEST_F(MmprojConvert, QuantizeWritesTheExactProjectorBeside) {
    const fs::path model = make_fixture("bf16", "--format float");
    ASSERT_EQ(convert(model, work_ / "exact.gguf").exit_code, 0);
    const fs::path out = work_ / "q.gguf", mmproj = work_ / "mmproj-q.gguf";
    test::write_file(mmproj, std::string("old"));
    auto run = convert(model, out, "--quantize q8_0");
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(test::read_file(mmproj), "old");
    fs::remove(mmproj);
    run = convert(model, out, "--quantize q8_0");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    ASSERT_TRUE(fs::exists(mmproj));
    EXPECT_EQ(test::read_file(mmproj), test::read_file(work_ / "mmproj-exact.gguf"));
    const auto text = GgufFile::open(out);
    bool quantized = false;
    for (const GgufTensorInfo& t : text->tensors()) quantized |= t.type == GgmlType::Q8_0;
    EXPECT_TRUE(quantized);
    const auto verify =
        test::run(quoted(test::rebox_cli()) + " verify " + quoted(model) + " " + quoted(out));
    EXPECT_EQ(verify.exit_code, 0) << verify.output;
}

}  // namespace
}  // namespace rebox
