// The exactness corner cases of the verify issue, end to end: a fixture whose layer-0 tensors hold
// fp16 subnormal scales and mins, -0 mins, negative scales, the largest finite fp16 values and
// constant groups (tools/mkfixture/README.md "Corners") converts, and `rebox verify` proves every
// re-encoded tensor bit-identical with max abs error 0.0 (-0.0 vs +0.0 counts as a difference
// there).
#include <gtest/gtest.h>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;

TEST(VerifyCorners, CornerCaseGroupsConvertAndVerifyBitIdentical) {
    const test::ScratchDir scratch;
    const fs::path dir = scratch.path();
    const auto model = dir / "model";
    const auto gguf = dir / "corners.gguf";
    const auto made = test::run(quoted(test::mkfixture_cli()) + " " + quoted(model) +
                                " --preset tiny --tokenizer small --corners");
    ASSERT_EQ(made.exit_code, 0) << made.output;
    const auto converted = test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) +
                                     " -o " + quoted(gguf) + " --no-verify --quiet");
    ASSERT_EQ(converted.exit_code, 0) << converted.output;
    const auto verified =
        test::run(quoted(test::rebox_cli()) + " verify " + quoted(model) + " " + quoted(gguf));
    EXPECT_EQ(verified.exit_code, 0) << verified.output;
    EXPECT_NE(verified.output.find("re-encoded tensors bit-identical: 15/15, max abs error 0.0"),
              std::string::npos)
        << verified.output;
    // The f32 reference build of the same corners is exact too.
    const auto f32 = dir / "corners-f32.gguf";
    const auto converted_f32 = test::run(quoted(test::rebox_cli()) + " convert " + quoted(model) +
                                         " -o " + quoted(f32) + " --outtype f32");
    EXPECT_EQ(converted_f32.exit_code, 0) << converted_f32.output;
    EXPECT_NE(converted_f32.output.find("bit-identical: 15/15"), std::string::npos)
        << converted_f32.output;
}

}  // namespace
}  // namespace rebox
