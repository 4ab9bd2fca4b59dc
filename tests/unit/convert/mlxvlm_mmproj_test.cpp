// rebox convert on rebox-mkfixture --arch qwen2_5_vl --format mlx --mlx-vlm (the layout
// mlx_vlm.convert saves after Qwen2_5_VL's sanitize: the tower under vision_tower.*, its Conv3D
// patch embedding stored channel-last [32, 2, 14, 14, 3] = PyTorch's [out, in, T, kh, kw]
// transposed (0, 2, 3, 4, 1)). Worked by hand from that definition: GGUF v.patch_embd.weight(.1)
// value (o, c, y, x), row-major [32, 3, 14, 14], is stored value (o, t, y, x, c), index
// (((o 2 + t) 14 + y) 14 + x) 3 + c, with t 0 (.weight) or 1 (.weight.1); the tensor's ne is
// {14, 14, 3, 32}. verify's own reading catches two swapped values; a legacy mlx-vlm tower
// (--mlx-vlm-quantized-tower: 4-bit groups of 32) is written in Q4_1 and verified.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>

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

class MlxVlmMmproj : public ::testing::Test {
  protected:
    fs::path make_fixture(const std::string& name, const std::string& flags) {
        const fs::path dir = work_ / name;
        const auto made = test::run(quoted(test::mkfixture_cli()) + " " + quoted(dir) +
                                    " --preset tiny --tokenizer small --no-pooling --arch "
                                    "qwen2_5_vl --format mlx --mlx-vlm " +
                                    flags);
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

TEST_F(MlxVlmMmproj, ChannelLastPatchEmbeddingMovedBack) {
    const fs::path model = make_fixture("mlx", "");
    const auto run = convert(model, work_ / "q.gguf");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto st = SafetensorsFile::open(model / "model.safetensors");
    const StTensorInfo* stored = st->find("vision_tower.patch_embed.proj.weight");
    ASSERT_NE(stored, nullptr);
    EXPECT_EQ(stored->shape, (std::vector<int64_t>{32, 2, 14, 14, 3}));
    const auto file = GgufFile::open(work_ / "mmproj-q.gguf");
    const char* names[] = {"v.patch_embd.weight", "v.patch_embd.weight.1"};
    for (uint64_t t = 0; t < 2; ++t) {
        const GgufTensorInfo* part = file->find_tensor(names[t]);
        ASSERT_NE(part, nullptr) << names[t];
        EXPECT_EQ(part->type, GgmlType::F32);
        EXPECT_EQ(part->ne, (std::vector<int64_t>{14, 14, 3, 32}));
        const uint64_t points[][4] = {{0, 0, 0, 1}, {0, 1, 0, 0}, {0, 2, 13, 5}, {31, 1, 7, 12}};
        for (const auto& p : points) {
            const uint64_t o = p[0], c = p[1], y = p[2], x = p[3];
            const size_t gguf_index = ((o * 3 + c) * 14 + y) * 14 + x;
            const size_t stored_index = (((o * 2 + t) * 14 + y) * 14 + x) * 3 + c;
            EXPECT_EQ(
                test::gguf_value(*file, names[t], gguf_index),
                test::safetensors_bf16(*st, "vision_tower.patch_embed.proj.weight", stored_index))
                << names[t] << " (" << o << ", " << c << ", " << y << ", " << x << ")";
        }
    }
    // The text model under language_model.model.* and nothing of the tower in it.
    const auto text = GgufFile::open(work_ / "q.gguf");
    EXPECT_NE(text->find_tensor("blk.0.attn_q.weight"), nullptr);
    for (const GgufTensorInfo& t : text->tensors())
        EXPECT_FALSE(t.name.starts_with("v.")) << t.name;
}

TEST_F(MlxVlmMmproj, VerifyCatchesTwoSwappedPatchValues) {
    const fs::path model = make_fixture("mlx", "");
    ASSERT_EQ(convert(model, work_ / "q.gguf").exit_code, 0);
    const std::string verify =
        quoted(test::rebox_cli()) + " verify " + quoted(model) + " " + quoted(work_ / "q.gguf");
    auto run = test::run(verify);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const fs::path mmproj = work_ / "mmproj-q.gguf";
    std::vector<uint8_t> bytes = test::read_file_bytes(mmproj);
    {
        const auto file = GgufFile::open(mmproj);
        const GgufTensorInfo* patch = file->find_tensor("v.patch_embd.weight.1");
        ASSERT_NE(patch, nullptr);
        const uint64_t at = file->data_offset() + patch->offset;
        // Values (0, 0, 0, 0) and (0, 0, 0, 1): distinct draws.
        ASSERT_NE(std::memcmp(bytes.data() + at, bytes.data() + at + 4, 4), 0);
        std::swap_ranges(bytes.begin() + at, bytes.begin() + at + 4, bytes.begin() + at + 4);
    }
    const fs::path moved = work_ / "swapped.gguf";
    test::write_file(moved, bytes);
    run = test::run(verify + " --mmproj " + quoted(moved));
    EXPECT_EQ(run.exit_code, 3) << run.output;
    EXPECT_NE(run.output.find("MISMATCH v.patch_embd.weight.1"), std::string::npos) << run.output;
}

TEST_F(MlxVlmMmproj, LegacyQuantizedTowerInQ41AndVerified) {
    const fs::path model = make_fixture("legacy", "--mlx-vlm-quantized-tower");
    const auto run = convert(model, work_ / "l.gguf");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto file = GgufFile::open(work_ / "mmproj-l.gguf");
    for (const char* name : {"v.blk.0.attn_q.weight", "v.blk.0.attn_v.weight",
                             "v.blk.3.ffn_down.weight", "mm.2.weight"}) {
        const GgufTensorInfo* t = file->find_tensor(name);
        ASSERT_NE(t, nullptr) << name;
        EXPECT_EQ(t->type, GgmlType::Q4_1) << name;
    }
    const auto verify = test::run(quoted(test::rebox_cli()) + " verify " + quoted(model) + " " +
                                  quoted(work_ / "l.gguf"));
    EXPECT_EQ(verify.exit_code, 0) << verify.output;
}

}  // namespace
}  // namespace rebox
