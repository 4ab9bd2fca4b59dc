// general.file_type per input format, as a user gets it: rebox-mkfixture writes a tiny qwen3
// checkpoint in each format, `rebox convert` writes it (its built-in verify must agree) and
// `rebox inspect --json` reads the key back. Expected values are llama.h's llama_ftype numbers,
// chosen as llama.cpp v0.4.0's converter chooses them (conversion/base.py,
// ModelBase.prepare_metadata): an NVFP4 checkpoint (ModelOpt, compressed-tensors nvfp4) is
// MOSTLY_NVFP4 = 39 and an MXFP4 one MOSTLY_MXFP4_MOE = 38 even though the embedding (and norms)
// stay BF16 / F32; formats the converter dequantizes (GPTQ, compressed-tensors int) keep their
// integer blocks in rebox, so the block type names the file (Q4_0 = 2, Q8_0 = 7), as llama.cpp's
// loader guesses it; float checkpoints name their dtype (BF16 = 32, F16 = 1, F32 = 0). gpt-oss
// (38) needs the real o200k tokenizer: tests/clients/test_gptoss_arch.sh compares it with the
// converter's own value. A standalone `rebox verify` must refuse an NVFP4 file whose key was
// edited back to 32.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::quoted;
using test::RunResult;

class FileTypeCli : public ::testing::Test {
  protected:
    test::ScratchDir scratch_;

    RunResult rebox(const std::string& args) {
        return test::run(quoted(test::rebox_cli()) + " " + args);
    }

    // The converted file of a tiny qwen3 fixture written with `mkfixture_args`.
    fs::path converted(const std::string& name, const std::string& mkfixture_args,
                       const std::string& convert_args = "") {
        const fs::path dir = scratch_ / name;
        EXPECT_EQ(test::run_mkfixture(dir, "--preset tiny --tokenizer small " + mkfixture_args), 0)
            << name;
        const fs::path gguf = scratch_ / (name + ".gguf");
        const RunResult r =
            rebox("convert " + quoted(dir) + " -o " + quoted(gguf) + " -q " + convert_args);
        EXPECT_EQ(r.exit_code, 0) << name << ": " << r.out << r.err;
        return gguf;
    }

    // general.file_type as stored, or -1 when the key is missing.
    int64_t file_type(const fs::path& gguf) {
        const RunResult r = rebox("inspect --json " + quoted(gguf));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        if (r.exit_code != 0) return -1;
        const json info = json::parse(r.out);
        for (const json& kv : info["kv"])
            if (kv["key"] == "general.file_type") return kv["value"].get<int64_t>();
        return -1;
    }
};

TEST_F(FileTypeCli, ModelOptNvfp4IsMostlyNvfp4DespiteItsBf16Embedding) {
    const fs::path gguf = converted("modelopt", "--format modelopt-nvfp4");
    EXPECT_EQ(file_type(gguf), 39);
    // verify has its own rule: the same file with the old, wrong value must fail.
    const fs::path bad = scratch_ / "modelopt-32.gguf";
    ASSERT_EQ(
        rebox("meta " + quoted(gguf) + " -o " + quoted(bad) + " --set general.file_type=32 -q")
            .exit_code,
        0);
    const RunResult verify = rebox("verify " + quoted(scratch_ / "modelopt") + " " + quoted(bad));
    EXPECT_NE(verify.exit_code, 0) << verify.out;
    EXPECT_NE(verify.output.find("general.file_type"), std::string::npos) << verify.output;
}

TEST_F(FileTypeCli, CompressedTensorsNvfp4IsMostlyNvfp4) {
    EXPECT_EQ(file_type(converted("ct-nvfp4", "--format ct-nvfp4", "--allow-inexact-global-scale")),
              39);
}

TEST_F(FileTypeCli, Mxfp4CheckpointsAreMostlyMxfp4Moe) {
    EXPECT_EQ(file_type(converted("ct-mxfp4", "--format ct-mxfp4")), 38);
    EXPECT_EQ(file_type(converted("mlx-mxfp4", "--format mxfp4")), 38);
}

TEST_F(FileTypeCli, MlxNvfp4IsMostlyNvfp4) {
    EXPECT_EQ(file_type(converted("mlx-nvfp4", "--format nvfp4")), 39);
}

TEST_F(FileTypeCli, AffineCodesNameTheirBlockType) {
    EXPECT_EQ(file_type(converted("mcq", "--format mcq")), 3);  // Q4_1 blocks
    EXPECT_EQ(file_type(converted("mlx", "--format mlx")), 3);
}

TEST_F(FileTypeCli, IntegerZeroPointFormatsNameTheirBlockType) {
    // 4-bit symmetric codes are Q4_0 blocks, 8-bit ones Q8_0 (docs/formats.md §5.5).
    EXPECT_EQ(file_type(converted("gptq4", "--format gptq --bits 4 --sym")), 2);
    EXPECT_EQ(file_type(converted("gptq8", "--format gptq --bits 8 --sym")), 7);
    EXPECT_EQ(file_type(converted("ct8", "--format compressed-tensors --bits 8 --sym")), 7);
}

TEST_F(FileTypeCli, FloatCheckpointsNameTheirDtype) {
    EXPECT_EQ(file_type(converted("bf16", "--format float --dtype bf16")), 32);
    EXPECT_EQ(file_type(converted("f16", "--format float --dtype f16")), 1);
    EXPECT_EQ(file_type(converted("f32", "--format float --dtype f32")), 0);
}

}  // namespace
}  // namespace rebox
