// Split/merge safety as a user meets it: an output that is one of the inputs (by name, by a
// shell glob, by a hard link) is refused with the argument order explained and the inputs
// untouched; --dry-run writes nothing; inspect explains shards joined with `cat`.
#include "gguf_tools/tool_fixture.hpp"
#include "test_files.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::quoted;

class SplitSafetyCli : public test::GgufToolTest {
  protected:
    // Splits a converted fixture into 3 shards "s-0000i-of-00003.gguf" in dir_.
    fs::path split_fixture() {
        const fs::path file = converted("a.gguf");
        const auto r =
            rebox("split " + quoted(file) + " " + quoted(dir_ / "s") + " --split-max-tensors 10");
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return dir_ / "s-00001-of-00003.gguf";
    }
    std::vector<std::vector<uint8_t>> shard_bytes() {
        std::vector<std::vector<uint8_t>> all;
        for (int i = 1; i <= 3; ++i)
            all.push_back(
                test::read_file_bytes(dir_ / ("s-0000" + std::to_string(i) + "-of-00003.gguf")));
        return all;
    }
    size_t entries() {
        size_t n = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
        return n;
    }
};

TEST_F(SplitSafetyCli, MergeRefusesAShardAsOutputByGlobNameOrInode) {
    const fs::path first = split_fixture();
    const auto before = shard_bytes();
    const size_t files = entries();
    // What `rebox merge s-*.gguf` becomes after the shell expands the glob.
    const auto glob =
        test::run("cd " + quoted(dir_) + " && " + quoted(test::rebox_cli()) + " merge s-*.gguf");
    EXPECT_EQ(glob.exit_code, 1);
    EXPECT_EQ(test::line_count(glob.err), 1u) << glob.err;
    EXPECT_TRUE(contains(glob.err, "3 file arguments given")) << glob.err;
    EXPECT_TRUE(contains(glob.err, "rebox merge FIRST_SHARD OUT.gguf")) << glob.err;
    // Two shards (e.g. a two-shard glob) with --force: the output is shard 2.
    const auto second =
        rebox("merge -f " + quoted(first) + " " + quoted(dir_ / "s-00002-of-00003.gguf"));
    EXPECT_EQ(second.exit_code, 1);
    EXPECT_EQ(test::line_count(second.err), 1u) << second.err;
    EXPECT_TRUE(contains(second.err, "is shard 2 of the input set")) << second.err;
    EXPECT_TRUE(contains(second.err, "a glob such as model-*.gguf expands to every shard"))
        << second.err;
    // The same inode under another name.
    fs::create_hard_link(dir_ / "s-00003-of-00003.gguf", dir_ / "other.gguf");
    const auto linked = rebox("merge -f " + quoted(first) + " " + quoted(dir_ / "other.gguf"));
    EXPECT_EQ(linked.exit_code, 1);
    EXPECT_TRUE(contains(linked.err, "is shard 3 of the input set")) << linked.err;
    fs::remove(dir_ / "other.gguf");
    EXPECT_EQ(shard_bytes(), before);
    EXPECT_EQ(entries(), files);  // no temporary left
}

TEST_F(SplitSafetyCli, SplitRefusesAPrefixThatNamesTheInputShards) {
    const fs::path first = split_fixture();
    const auto before = shard_bytes();
    const auto r =
        rebox("split -f " + quoted(first) + " " + quoted(dir_ / "s") + " --split-max-tensors 10");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(test::line_count(r.err), 1u) << r.err;
    EXPECT_TRUE(contains(r.err, "is shard 1 of the input set")) << r.err;
    EXPECT_TRUE(contains(r.err, "rebox split IN.gguf OUT_PREFIX")) << r.err;
    EXPECT_EQ(shard_bytes(), before);
}

TEST_F(SplitSafetyCli, DryRunListsOutputsAndWritesNothing) {
    const fs::path first = split_fixture();
    const size_t files = entries();
    const auto merge = rebox("merge --dry-run " + quoted(first) + " " + quoted(dir_ / "m.gguf"));
    EXPECT_EQ(merge.exit_code, 0) << merge.err;
    // The merged size is the original file's (same KVs, same tensors, same padding).
    EXPECT_EQ(merge.out, "would write " + (dir_ / "m.gguf").string() + " (24 tensors, " +
                             std::to_string(fs::file_size(dir_ / "a.gguf")) + " bytes)\n");
    const auto split = rebox("split --dry-run " + quoted(dir_ / "a.gguf") + " " +
                             quoted(dir_ / "z") + " --split-max-tensors 10");
    EXPECT_EQ(split.exit_code, 0) << split.err;
    EXPECT_EQ(test::line_count(split.out), 3u) << split.out;
    for (int i = 1; i <= 3; ++i) {
        const std::string name = "s-0000" + std::to_string(i) + "-of-00003.gguf";
        const std::string z = "z-0000" + std::to_string(i) + "-of-00003.gguf";
        // Each planned shard is as large as the real split's shard with the same number.
        EXPECT_TRUE(contains(split.out, "would write " + (dir_ / z).string() + " (" +
                                            std::to_string(i < 3 ? 10 : 4) + " tensors, " +
                                            std::to_string(fs::file_size(dir_ / name)) +
                                            " bytes)\n"))
            << split.out;
    }
    EXPECT_EQ(entries(), files);
}

TEST_F(SplitSafetyCli, InspectExplainsShardsJoinedWithCat) {
    split_fixture();
    const auto cat =
        test::run("cat " + quoted(dir_ / "s-00001-of-00003.gguf") + " " +
                  quoted(dir_ / "s-00002-of-00003.gguf") + " " +
                  quoted(dir_ / "s-00003-of-00003.gguf") + " > " + quoted(dir_ / "joined.gguf"));
    ASSERT_EQ(cat.exit_code, 0);
    const auto r = rebox("inspect " + quoted(dir_ / "joined.gguf"));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(test::line_count(r.err), 1u) << r.err;
    // The second header starts where shard 1's bytes end.
    EXPECT_TRUE(contains(r.err, "a second GGUF header starts at byte " +
                                    std::to_string(fs::file_size(dir_ / "s-00001-of-00003.gguf"))))
        << r.err;
    EXPECT_TRUE(contains(r.err, "rebox merge")) << r.err;
    // Plain trailing bytes are only noted.
    fs::copy_file(dir_ / "a.gguf", dir_ / "tail.gguf");
    { std::ofstream(dir_ / "tail.gguf", std::ios::app) << "0123456789"; }
    const auto tail = rebox("inspect " + quoted(dir_ / "tail.gguf"));
    EXPECT_EQ(tail.exit_code, 0) << tail.err;
    EXPECT_TRUE(contains(tail.err, "10 bytes after the end of the tensor data")) << tail.err;
    // An intact shard set inspects without a note.
    const auto clean = rebox("inspect " + quoted(dir_ / "s-00001-of-00003.gguf"));
    EXPECT_EQ(clean.exit_code, 0) << clean.err;
    EXPECT_EQ(clean.err, "");
}

}  // namespace
}  // namespace rebox
