// rebox convert on rebox-mkfixture --arch gemma4 (Gemma4ForConditionalGeneration with a vision
// tower of 2 layers of width 32, 2 heads of 16, MLP 64, patches of 8 x 8, a position table of 128
// per axis, and the projector embed_vision.embedding_projection to the text width 64): the mmproj
// beside the text model with llama.cpp's gemma4v names, ne and types, and its keys worked out by
// hand from the fixture's config.json / processor_config.json and Gemma4VisionAudioModel
// (conversion/gemma.py: image_size fixed at 224, the projector type under
// clip.vision.projector_type, layer_norm_epsilon 1e-6 for a vision_config without
// layer_norm_eps). The patch embedding's values as transformers' Linear [32, 8 x 8 x 3] (pixels by
// row, column, channel) reshaped and permuted to the Conv2D [32, 3, 8, 8]: GGUF (o, c, y, x) is
// source (o, (8 y + x) 3 + c). The E2B layout's clipping bounds ([] buffers) as [1] F32; an audio
// tower left out of both files with notes; verify's own reorder catches two swapped values; rebox
// check takes the pair (gemma4v's output width is the projection's ne[1]); the refusals leave
// neither file.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>

#include "format/gguf_file.hpp"
#include "format/safetensors.hpp"
#include "stored_values.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;

class Gemma4Mmproj : public ::testing::Test {
  protected:
    fs::path make_fixture(const std::string& name, const std::string& flags) {
        const fs::path dir = work_ / name;
        const auto made = test::run(quoted(test::mkfixture_cli()) + " " + quoted(dir) +
                                    " --preset tiny --arch gemma4 " + flags);
        EXPECT_EQ(made.exit_code, 0) << made.output;
        return dir;
    }
    test::RunResult convert(const fs::path& model, const fs::path& out) {
        return test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) + " -o " +
                         quoted(out) + " -q");
    }
    test::ScratchDir scratch_;
    fs::path work_ = scratch_.path();
};

TEST_F(Gemma4Mmproj, WritesTheGemma4vProjectorAsTheConverter) {
    const fs::path model = make_fixture("bf16", "--format float");
    const auto run = convert(model, work_ / "g.gguf");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto mm = GgufFile::open(work_ / "mmproj-g.gguf");
    const auto u32 = [&](const char* key) { return mm->find(key)->as_u32().value_or(0); };
    EXPECT_EQ(*mm->find("general.architecture")->as_string(), "clip");
    EXPECT_EQ(*mm->find("general.type")->as_string(), "mmproj");
    EXPECT_EQ(*mm->find("clip.vision.projector_type")->as_string(), "gemma4v");
    EXPECT_EQ(mm->find("clip.projector_type"), nullptr);  // the mixed-modality key only
    EXPECT_EQ(mm->find("clip.use_gelu"), nullptr);
    EXPECT_EQ(mm->find("clip.has_audio_encoder"), nullptr);
    EXPECT_EQ(u32("general.file_type"), 32u);           // MOSTLY_BF16
    EXPECT_EQ(u32("clip.vision.projection_dim"), 64u);  // text_config.hidden_size
    EXPECT_EQ(u32("clip.vision.image_size"), 224u);     // fixed by Gemma4VisionAudioModel
    EXPECT_EQ(u32("clip.vision.patch_size"), 8u);
    EXPECT_EQ(u32("clip.vision.embedding_length"), 32u);
    EXPECT_EQ(u32("clip.vision.feed_forward_length"), 64u);
    EXPECT_EQ(u32("clip.vision.block_count"), 2u);
    EXPECT_EQ(u32("clip.vision.attention.head_count"), 2u);
    EXPECT_EQ(mm->find("clip.vision.attention.layer_norm_epsilon")->as_f32(), 1e-6f);
    // processor_config.json's image_processor: no normalization.
    const GgufValue* mean = mm->find("clip.vision.image_mean");
    ASSERT_NE(mean, nullptr);
    EXPECT_EQ(mean->elem_type, GgufType::FLOAT32);

    // 2 (patch, positions) + 2 layers x 13 + std_bias, std_scale, the projection.
    std::vector<std::string> names;
    for (const GgufTensorInfo& t : mm->tensors()) names.push_back(t.name);
    std::vector<std::string> want = {"v.patch_embd.weight", "v.position_embd.weight"};
    for (int layer = 0; layer < 2; ++layer)
        for (const char* part :
             {"ln1", "attn_q", "attn_k", "attn_v", "attn_out", "attn_q_norm", "attn_k_norm",
              "attn_post_norm", "ln2", "ffn_gate", "ffn_up", "ffn_down", "ffn_post_norm"})
            want.push_back("v.blk." + std::to_string(layer) + "." + part + ".weight");
    for (const char* name : {"v.std_bias", "v.std_scale", "mm.input_projection.weight"})
        want.push_back(name);
    EXPECT_EQ(names, want);
    using Ne = std::vector<int64_t>;
    const std::tuple<const char*, Ne, GgmlType> shapes[] = {
        {"v.patch_embd.weight", {8, 8, 3, 32}, GgmlType::F32},  // MmprojModel: F32 unless F16
        {"v.position_embd.weight", {32, 128, 2}, GgmlType::F32},
        {"v.blk.0.attn_q.weight", {32, 32}, GgmlType::BF16},
        {"v.blk.1.ffn_gate.weight", {32, 64}, GgmlType::BF16},
        {"v.blk.1.ffn_down.weight", {64, 32}, GgmlType::BF16},
        {"v.blk.0.attn_q_norm.weight", {16}, GgmlType::F32},
        {"v.blk.0.attn_post_norm.weight", {32}, GgmlType::F32},
        {"v.std_scale", {32}, GgmlType::F32},
        {"mm.input_projection.weight", {32, 64}, GgmlType::BF16},  // not forced F16
    };
    for (const auto& [name, ne, type] : shapes) {
        const GgufTensorInfo* t = mm->find_tensor(name);
        ASSERT_NE(t, nullptr) << name;
        EXPECT_EQ(t->ne, ne) << name;
        EXPECT_EQ(t->type, type) << name;
    }
    // The patch embedding reordered: GGUF (o, c, y, x) at ((o 3 + c) 8 + y) 8 + x.
    const auto st = SafetensorsFile::open(model / "model.safetensors");
    const std::string input_proj = "model.vision_tower.patch_embedder.input_proj.weight";
    for (const auto [o, c, y, x] : {std::array<size_t, 4>{0, 0, 0, 1}, {1, 2, 3, 5}, {31, 1, 7, 0}})
        EXPECT_EQ(test::gguf_value(*mm, "v.patch_embd.weight", ((o * 3 + c) * 8 + y) * 8 + x),
                  test::safetensors_bf16(*st, input_proj, o * 192 + (8 * y + x) * 3 + c))
            << o << " " << c << " " << y << " " << x;
    // The position table as it is: axis 1, position 5, element 7.
    EXPECT_EQ(
        test::gguf_value(*mm, "v.position_embd.weight", (1 * 128 + 5) * 32 + 7),
        test::safetensors_bf16(*st, "model.vision_tower.patch_embedder.position_embedding_table",
                               (1 * 128 + 5) * 32 + 7));
    // rebox check takes the pair: the projection's ne[1] (64) is the text model's width.
    const auto check = test::run(quoted(test::rebox_cli()) + " check " + quoted(work_ / "g.gguf"));
    EXPECT_EQ(check.exit_code, 0) << check.output;
    EXPECT_NE(check.output.find("OK: 2 file(s)"), std::string::npos) << check.output;
}

TEST_F(Gemma4Mmproj, ClippedLinearsCarryTheirBounds) {
    const fs::path model = make_fixture("e2b", "--gemma4-e2b --format float");
    const auto run = convert(model, work_ / "g.gguf");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto mm = GgufFile::open(work_ / "mmproj-g.gguf");
    // 2 + 2 x (13 + 7 x 4 bounds) + the projection; no standardization.
    EXPECT_EQ(mm->tensors().size(), 2u + 2 * (13 + 28) + 1);
    EXPECT_EQ(mm->find_tensor("v.std_bias"), nullptr);
    const auto st = SafetensorsFile::open(model / "model.safetensors");
    const std::pair<const char*, const char*> bounds[] = {
        {"self_attn.q_proj.input_min", "v.blk.1.attn_q.input_min"},
        {"self_attn.o_proj.output_max", "v.blk.1.attn_out.output_max"},
        {"mlp.down_proj.input_max", "v.blk.1.ffn_down.input_max"},
    };
    for (const auto& [name, bound] : bounds) {
        const std::string source = std::string("model.vision_tower.encoder.layers.1.") + name;
        const StTensorInfo* info = st->find(source);
        ASSERT_NE(info, nullptr) << source;
        EXPECT_TRUE(info->shape.empty()) << source;  // a 0-d buffer
        const GgufTensorInfo* t = mm->find_tensor(bound);
        ASSERT_NE(t, nullptr) << bound;
        EXPECT_EQ(t->ne, std::vector<int64_t>{1}) << bound;
        EXPECT_EQ(t->type, GgmlType::F32) << bound;
        EXPECT_EQ(test::gguf_value(*mm, bound, 0), test::safetensors_bf16(*st, source, 0)) << bound;
    }
}

// An audio tower (E2B / E4B have one): left out of the text model and of the mmproj, with notes
// that say so; the mmproj holds the vision encoder alone.
TEST_F(Gemma4Mmproj, AudioTowerLeftOutWithANote) {
    const fs::path model =
        make_fixture("audio",
                     "--format float --extra-tensor model.audio_tower.output_proj.weight:F32 "
                     "--extra-tensor model.embed_audio.embedding_projection.weight:F32");
    const auto run = test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) + " -o " +
                               quoted(work_ / "g.gguf"));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("33 multimodal tensor(s) left out of the text model, 31 of them "
                              "written to the mmproj file"),
              std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find("2 audio tower tensor(s) left out of the mmproj"), std::string::npos)
        << run.output;
    const auto mm = GgufFile::open(work_ / "mmproj-g.gguf");
    EXPECT_EQ(mm->tensors().size(), 31u);
    EXPECT_EQ(mm->find("clip.has_audio_encoder"), nullptr);
}

// rebox verify checks the mmproj with its own reading of the reorder: the patch embedding with two
// values of a row swapped (as a wrong pixel order would leave them) is a MISMATCH, exit 3.
TEST_F(Gemma4Mmproj, VerifyCatchesAPatchEmbeddingInAnotherOrder) {
    const fs::path model = make_fixture("bf16", "--format float");
    ASSERT_EQ(convert(model, work_ / "g.gguf").exit_code, 0);
    const std::string verify =
        quoted(test::rebox_cli()) + " verify " + quoted(model) + " " + quoted(work_ / "g.gguf");
    auto run = test::run(verify);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const fs::path mmproj = work_ / "mmproj-g.gguf";
    std::vector<uint8_t> bytes = test::read_file_bytes(mmproj);
    {
        const auto file = GgufFile::open(mmproj);
        const GgufTensorInfo* patch = file->find_tensor("v.patch_embd.weight");
        ASSERT_NE(patch, nullptr);
        const uint64_t at = file->data_offset() + patch->offset;
        // Values 0 and 1 of row 0: channel 0, pixels (0, 0) and (0, 1); distinct draws.
        ASSERT_NE(std::memcmp(bytes.data() + at, bytes.data() + at + 4, 4), 0);
        std::swap_ranges(bytes.begin() + at, bytes.begin() + at + 4, bytes.begin() + at + 4);
    }
    const fs::path moved = work_ / "swapped.gguf";
    test::write_file(moved, bytes);
    run = test::run(verify + " --mmproj " + quoted(moved));
    EXPECT_EQ(run.exit_code, 3) << run.output;
    EXPECT_NE(run.output.find("MISMATCH v.patch_embd.weight"), std::string::npos) << run.output;
}

// One line naming what is wrong, exit 2, and neither file.
TEST_F(Gemma4Mmproj, RefusalsLeaveNeitherFile) {
    const fs::path out = work_ / "g.gguf", mmproj = work_ / "mmproj-g.gguf";
    const fs::path wide = make_fixture("wide", "--gemma4-defect projector-width");
    auto run = convert(wide, out);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("model.embed_vision.embedding_projection.weight: is [64, 64] where "
                              "the configs say [64, 32]"),
              std::string::npos)
        << run.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(mmproj));
    const fs::path model = make_fixture("nostd", "--format float");
    nlohmann::json processor =
        nlohmann::json::parse(test::read_file(model / "processor_config.json"));
    processor["image_processor"].erase("image_std");
    test::write_file(model / "processor_config.json", processor.dump(2));
    run = convert(model, out);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("preprocessor_config.json: image_std: is missing"), std::string::npos)
        << run.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(mmproj));
}

}  // namespace
}  // namespace rebox
