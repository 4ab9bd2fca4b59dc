// The output does not depend on the number of worker threads: the same fixtures converted with
// --threads 1 and --threads 5 (more workers than slices of some tensors, so they race for work and
// finish in a different order each run) must give byte-identical files, with verification on
// (it runs alongside the writing) and off, single files and split sets alike.
#include <gtest/gtest.h>

#include "../fixtures/fixture_reader.hpp"
#include "../test_process.hpp"
#include "test_files.hpp"
#include "test_process.hpp"

namespace rebox::test {
namespace {

namespace fs = std::filesystem;

// Converts `model` into dir/name with the given flags; returns the written files' bytes in order.
std::vector<std::vector<uint8_t>> convert_bytes(const fs::path& model, const fs::path& dir,
                                                const std::string& name, const std::string& flags) {
    fs::create_directories(dir);
    const RunResult r = run(quoted(rebox_cli()) + " convert " + quoted(model) + " -o " +
                            quoted(dir / (name + ".gguf")) + " -q -f " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().filename().string().rfind(name, 0) == 0) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    std::vector<std::vector<uint8_t>> bytes;
    for (const fs::path& file : files) bytes.push_back(read_file_bytes(file));
    return bytes;
}

void expect_same_output_for_any_thread_count(const std::string& fixture_args,
                                             const std::string& convert_flags) {
    const test::ScratchDir scratch;
    const fs::path dir = scratch / "thread_determinism";
    ASSERT_EQ(run_mkfixture(dir / "model", "--preset tiny " + fixture_args), 0);
    for (const char* verify : {"", "--no-verify"}) {
        SCOPED_TRACE(std::string(fixture_args) + " " + convert_flags + " " + verify);
        const std::string flags = convert_flags + " " + verify;
        const auto one = convert_bytes(dir / "model", dir / "t1", "out", flags + " --threads 1");
        const auto many = convert_bytes(dir / "model", dir / "t5", "out", flags + " --threads 5");
        ASSERT_FALSE(one.empty());
        ASSERT_EQ(one.size(), many.size());
        for (size_t i = 0; i < one.size(); ++i) {
            ASSERT_GT(one[i].size(), 1000u);
            EXPECT_TRUE(one[i] == many[i]) << "file " << i << " differs between 1 and 5 threads";
        }
        fs::remove_all(dir / "t1");
        fs::remove_all(dir / "t5");
    }
}

TEST(ThreadDeterminism, McqMixedBitsSameBytes) {
    expect_same_output_for_any_thread_count("--format mcq", "");
}

TEST(ThreadDeterminism, MlxMixed45SameBytes) {
    expect_same_output_for_any_thread_count("--format mlx --recipe mixed_4_5 --untied", "");
}

TEST(ThreadDeterminism, FloatBf16CopyAndWidenSameBytes) {
    expect_same_output_for_any_thread_count("--format float --dtype bf16", "");
    expect_same_output_for_any_thread_count("--format float --dtype bf16", "--outtype f32");
}

TEST(ThreadDeterminism, LlamaPermutedRowsSameBytes) {
    expect_same_output_for_any_thread_count("--arch llama --format mcq", "");
}

TEST(ThreadDeterminism, SplitSetSameBytes) {
    expect_same_output_for_any_thread_count("--format mcq", "--split-max-size 30000");
}

}  // namespace
}  // namespace rebox::test
