// convert never replaces one of its inputs: an output path that is a checkpoint file (by name, by
// hard link, or as one of a split output's shard names) is refused with one line, with or without
// --force, and every checkpoint file keeps its bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::quoted;

size_t line_count(const std::string& text) {
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

class ConvertInputOverwrite : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_EQ(test::run_mkfixture(model_, "--preset tiny"), 0); }
    test::RunResult convert(const fs::path& output, const std::string& extra = "") const {
        return test::run(quoted(test::rebox_cli()) + " convert " + quoted(model_) + " -q -o " +
                         quoted(output) + " " + extra);
    }
    // Every file under the work folder with its bytes (the checkpoint and anything else there).
    std::map<std::string, std::vector<uint8_t>> snapshot() const {
        std::map<std::string, std::vector<uint8_t>> files;
        for (const auto& entry : fs::recursive_directory_iterator(work_))
            if (entry.is_regular_file())
                files[entry.path().string()] = test::read_file_bytes(entry.path());
        return files;
    }
    void expect_refused(const test::RunResult& r, const std::string& input) const {
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_EQ(line_count(r.err), 1u) << r.err;
        EXPECT_NE(r.err.find("is the input file " + input), std::string::npos) << r.err;
    }
    test::ScratchDir scratch_;
    fs::path work_ = scratch_.path();
    fs::path model_ = work_ / "model";
};

TEST_F(ConvertInputOverwrite, RefusesTheCheckpointsOwnFilesWithForce) {
    const auto before = snapshot();
    for (const char* name : {"model.safetensors", "config.json", "tokenizer.json",
                             "tokenizer_config.json", "1_Pooling/config.json"}) {
        SCOPED_TRACE(name);
        expect_refused(convert(model_ / name, "--force"), (model_ / name).string());
        // Without --force it is refused too (the file exists).
        EXPECT_NE(convert(model_ / name).exit_code, 0);
    }
    EXPECT_EQ(snapshot(), before);  // same files, same bytes, no temporary left
}

TEST_F(ConvertInputOverwrite, RefusesAHardLinkAndASplitShardThatIsAnInput) {
    // The shard names a split conversion writes, learnt from a real run elsewhere.
    const fs::path probe = work_ / "probe";
    fs::create_directory(probe);
    ASSERT_EQ(convert(probe / "s.gguf", "--split-max-size 20000").exit_code, 0);
    std::vector<std::string> shards;
    for (const auto& entry : fs::directory_iterator(probe))
        shards.push_back(entry.path().filename().string());
    std::sort(shards.begin(), shards.end());
    ASSERT_GE(shards.size(), 2u);
    fs::remove_all(probe);

    fs::create_hard_link(model_ / "model.safetensors", work_ / "linked.gguf");
    fs::create_hard_link(model_ / "model.safetensors", work_ / shards.back());
    const auto before = snapshot();
    expect_refused(convert(work_ / "linked.gguf", "--force"),
                   (model_ / "model.safetensors").string());
    expect_refused(convert(work_ / "s.gguf", "--force --split-max-size 20000"),
                   (model_ / "model.safetensors").string());
    EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace rebox
