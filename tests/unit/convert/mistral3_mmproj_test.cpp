// rebox convert on rebox-mkfixture --arch mistral3 --multimodal (Mistral-Small-3.1's layout: a
// Pixtral tower of 3 layers of width 32, 2 heads of 16, MLP 64, patches of 14 x 14, image_size
// 224, spatial_merge_size 2, and the projector to the text width 64; [IMG_BREAK] the tokenizer's
// last added token, id 459; also in transformers >= 4.52's layout): the mmproj beside the text
// model with llama.cpp's pixtral names, ne and types, and its keys worked out by hand from the
// fixture's config.json and LlavaVisionModel (conversion/llava.py: layer_norm_epsilon 1e-5 for a
// vision_config without layer_norm_eps, clip.use_silu for hidden_act silu, spatial_merge_size from
// the top level). attn_q / attn_k by LlamaModel.permute(w, 2, 2), worked by hand: heads of 16 rows,
// GGUF row 2i + j of a head is its source row i + 8 j. v.token_embd.img_break is row 459 of the
// text embedding as F32. verify catches an unpermuted row; the refusals (a quantized embedding, a
// projector wider than the tower) leave neither file.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "format/gguf_file.hpp"
#include "format/safetensors.hpp"
#include "stored_values.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace mistral3_mmproj_test {

namespace fs = std::filesystem;
using test::quoted;

class Mistral3Mmproj : public ::testing::Test {
  protected:
    fs::path make_fixture(const std::string& name, const std::string& flags) {
        const fs::path dir = work_ / name;
        const auto made = test::run(quoted(test::mkfixture_cli()) + " " + quoted(dir) +
                                    " --preset tiny --arch mistral3 " + flags);
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

TEST_F(Mistral3Mmproj, WritesThePixtralProjectorAsTheConverter) {
    const fs::path model = make_fixture("bf16", "--multimodal --format float");
    const auto run = convert(model, work_ / "m.gguf");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto mm = GgufFile::open(work_ / "mmproj-m.gguf");
    const auto u32 = [&](const char* key) { return mm->find(key)->as_u32().value_or(0); };
    EXPECT_EQ(*mm->find("general.architecture")->as_string(), "clip");
    EXPECT_EQ(*mm->find("general.type")->as_string(), "mmproj");
    EXPECT_EQ(*mm->find("clip.projector_type")->as_string(), "pixtral");
    EXPECT_EQ(u32("general.file_type"), 32u);           // MOSTLY_BF16
    EXPECT_EQ(u32("clip.vision.projection_dim"), 64u);  // text_config.hidden_size
    EXPECT_EQ(u32("clip.vision.image_size"), 224u);
    EXPECT_EQ(u32("clip.vision.patch_size"), 14u);
    EXPECT_EQ(u32("clip.vision.embedding_length"), 32u);
    EXPECT_EQ(u32("clip.vision.feed_forward_length"), 64u);
    EXPECT_EQ(u32("clip.vision.block_count"), 3u);
    EXPECT_EQ(u32("clip.vision.attention.head_count"), 2u);
    EXPECT_EQ(mm->find("clip.vision.attention.layer_norm_epsilon")->as_f32(), 1e-5f);
    EXPECT_EQ(mm->find("clip.use_silu")->as_bool(), true);
    EXPECT_EQ(mm->find("clip.use_gelu"), nullptr);
    EXPECT_EQ(u32("clip.vision.spatial_merge_size"), 2u);

    std::vector<std::string> names;
    for (const GgufTensorInfo& t : mm->tensors()) names.push_back(t.name);
    std::vector<std::string> want = {"v.patch_embd.weight", "v.pre_ln.weight"};
    for (int layer = 0; layer < 3; ++layer)
        for (const char* part : {"ln1", "attn_q", "attn_k", "attn_v", "attn_out", "ln2", "ffn_gate",
                                 "ffn_up", "ffn_down"})
            want.push_back("v.blk." + std::to_string(layer) + "." + part + ".weight");
    for (const char* name : {"mm.input_norm.weight", "mm.patch_merger.weight", "mm.1.weight",
                             "mm.2.weight", "v.token_embd.img_break"})
        want.push_back(name);
    EXPECT_EQ(names, want);
    using Ne = std::vector<int64_t>;
    const std::tuple<const char*, Ne, GgmlType> shapes[] = {
        {"v.patch_embd.weight", {14, 14, 3, 32}, GgmlType::F32},  // MmprojModel: F32 unless F16
        {"v.pre_ln.weight", {32}, GgmlType::F32},
        {"v.blk.0.attn_q.weight", {32, 32}, GgmlType::BF16},
        {"v.blk.2.ffn_down.weight", {64, 32}, GgmlType::BF16},
        {"mm.input_norm.weight", {32}, GgmlType::F32},
        {"mm.patch_merger.weight", {128, 32}, GgmlType::F32},  // the same rule as the patch
        {"mm.1.weight", {32, 64}, GgmlType::BF16},
        {"mm.2.weight", {64, 64}, GgmlType::BF16},
        {"v.token_embd.img_break", {64}, GgmlType::F32},
    };
    for (const auto& [name, ne, type] : shapes) {
        const GgufTensorInfo* t = mm->find_tensor(name);
        ASSERT_NE(t, nullptr) << name;
        EXPECT_EQ(t->ne, ne) << name;
        EXPECT_EQ(t->type, type) << name;
    }
    const auto st = SafetensorsFile::open(model / "model.safetensors");
    // q / k: GGUF row (head h, 2 i + j) holds source row 16 h + i + 8 j; 32 values a row.
    const std::string layer1 = "vision_tower.transformer.layers.1.attention.";
    for (const auto& [gguf_row, source_row] :
         {std::pair<size_t, size_t>{0, 0}, {1, 8}, {2, 1}, {15, 15}, {17, 24}, {30, 23}})
        for (const char* qk : {"q", "k"})
            for (const size_t col : {size_t{0}, size_t{31}})
                EXPECT_EQ(test::gguf_value(*mm, std::string("v.blk.1.attn_") + qk + ".weight",
                                           gguf_row * 32 + col),
                          test::safetensors_bf16(*st, layer1 + qk + "_proj.weight",
                                                 source_row * 32 + col))
                    << qk << " row " << gguf_row;
    // v is not permuted.
    EXPECT_EQ(test::gguf_value(*mm, "v.blk.1.attn_v.weight", 1 * 32 + 3),
              test::safetensors_bf16(*st, layer1 + "v_proj.weight", 1 * 32 + 3));
    // [IMG_BREAK] (id 459): row 459 of the text embedding, 64 values.
    for (const size_t i : {size_t{0}, size_t{17}, size_t{63}})
        EXPECT_EQ(
            test::gguf_value(*mm, "v.token_embd.img_break", i),
            test::safetensors_bf16(*st, "language_model.model.embed_tokens.weight", 459 * 64 + i))
            << i;
    // rebox check takes the pair: the projection's ne[1] (64) is the text model's width.
    const auto check = test::run(quoted(test::rebox_cli()) + " check " + quoted(work_ / "m.gguf"));
    EXPECT_EQ(check.exit_code, 0) << check.output;
    EXPECT_NE(check.output.find("OK: 2 file(s)"), std::string::npos) << check.output;
}

// transformers >= 4.52's layout (model.vision_tower.*, model.language_model.*): the same file.
TEST_F(Mistral3Mmproj, SplitLayoutReadsAlike) {
    const fs::path model = make_fixture("split", "--multimodal --vl-split --format float");
    const auto run = convert(model, work_ / "s.gguf");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto mm = GgufFile::open(work_ / "mmproj-s.gguf");
    EXPECT_EQ(mm->tensors().size(), 2u + 3 * 9 + 5);
    const auto st = SafetensorsFile::open(model / "model.safetensors");
    for (const size_t i : {size_t{0}, size_t{63}})
        EXPECT_EQ(
            test::gguf_value(*mm, "v.token_embd.img_break", i),
            test::safetensors_bf16(*st, "model.language_model.embed_tokens.weight", 459 * 64 + i));
    EXPECT_EQ(
        test::gguf_value(*mm, "v.blk.2.attn_k.weight", 1 * 32 + 5),
        test::safetensors_bf16(
            *st, "model.vision_tower.transformer.layers.2.attention.k_proj.weight", 8 * 32 + 5));
}

// Without --multimodal the fixture's tower is stand-ins and config.json has no vision_config: the
// text model alone.
TEST_F(Mistral3Mmproj, NoVisionConfigNoMmproj) {
    const fs::path model = make_fixture("text", "--format float");
    ASSERT_EQ(convert(model, work_ / "t.gguf").exit_code, 0);
    EXPECT_TRUE(fs::exists(work_ / "t.gguf"));
    EXPECT_FALSE(fs::exists(work_ / "mmproj-t.gguf"));
}

// verify permutes the source rows itself: a q row left where the source has it is a MISMATCH.
TEST_F(Mistral3Mmproj, VerifyCatchesAnUnpermutedRow) {
    const fs::path model = make_fixture("bf16", "--multimodal --format float");
    ASSERT_EQ(convert(model, work_ / "m.gguf").exit_code, 0);
    const fs::path mmproj = work_ / "mmproj-m.gguf";
    std::vector<uint8_t> bytes = test::read_file_bytes(mmproj);
    {
        const auto file = GgufFile::open(mmproj);
        const GgufTensorInfo* q = file->find_tensor("v.blk.0.attn_q.weight");
        ASSERT_NE(q, nullptr);
        const uint64_t at = file->data_offset() + q->offset;
        // GGUF rows 1 and 8 (source rows 8 and 4) swapped: 32 BF16 values each.
        std::swap_ranges(bytes.begin() + at + 64, bytes.begin() + at + 128,
                         bytes.begin() + at + 8 * 64);
    }
    const fs::path moved = work_ / "swapped.gguf";
    test::write_file(moved, bytes);
    const auto run = test::run(quoted(test::rebox_cli()) + " verify " + quoted(model) + " " +
                               quoted(work_ / "m.gguf") + " --mmproj " + quoted(moved));
    EXPECT_EQ(run.exit_code, 3) << run.output;
    EXPECT_NE(run.output.find("MISMATCH v.blk.0.attn_q.weight"), std::string::npos) << run.output;
}

// One line naming what is wrong, exit 2, and neither file.
TEST_F(Mistral3Mmproj, RefusalsLeaveNeitherFile) {
    const fs::path out = work_ / "m.gguf", mmproj = work_ / "mmproj-m.gguf";
    const fs::path wide = make_fixture("wide", "--multimodal --format float --vl-merger-width 48");
    auto run = convert(wide, out);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("multi_modal_projector.linear_1.weight: is [64, 48] where the "
                              "configs say [64, 32]"),
              std::string::npos)
        << run.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(mmproj));
    // mlx-lm quantizes the embedding: its [IMG_BREAK] row is refused, not dequantized.
    const fs::path mlx = make_fixture("mlx", "--multimodal --format mlx");
    run = convert(mlx, out);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("BLOCKER language_model.model.embed_tokens.weight: is quantized"),
              std::string::npos)
        << run.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(mmproj));
}

}  // namespace mistral3_mmproj_test
}  // namespace rebox
