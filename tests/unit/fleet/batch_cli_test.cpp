// rebox batch run as a fleet would run it: every index of a fixture manifest (a good model, a
// BLOCKER, bad input, a missing source dir, a line past the end) gives the exit code and report
// docs/fleet.md documents; a retried index is a no-op; a GGUF left without its report is redone;
// the index comes from --index, $JOB_COMPLETION_INDEX, $SLURM_ARRAY_TASK_ID in that order. The
// GGUF a batch writes must be the bytes `rebox convert` writes for the same source and options.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test_files.hpp"
#include "test_process.hpp"

namespace rebox::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string cli() { return quoted(rebox_cli()); }

class BatchCli : public ::testing::Test {
  protected:
    // Sources: good/ (tiny mcq-v1), blocked/ (group 16: a BLOCKER), garbage/ (a model.safetensors
    // that is not one: bad input); absent/ does not exist.
    static void SetUpTestSuite() {
        scratch_ = new ScratchDir("batch_sources");
        ASSERT_EQ(run_mkfixture(*scratch_ / "zoo/good", "--preset tiny"), 0);
        ASSERT_EQ(run_mkfixture(*scratch_ / "zoo/blocked", "--preset tiny --defect group16"), 0);
        fs::create_directories(*scratch_ / "zoo/garbage");
        write_file(*scratch_ / "zoo/garbage/model.safetensors", std::string("\xff\xff\xff\xff", 4));
        // The reference bytes, from `rebox convert` itself (batch only routes a line to it).
        const fs::path ref = *scratch_ / "ref.gguf";
        ASSERT_EQ(
            run(cli() + " convert " + quoted(*scratch_ / "zoo/good") + " -o " + quoted(ref) + " -q")
                .exit_code,
            0);
        reference_ = new std::string(read_file(ref));
        const fs::path ref32 = *scratch_ / "ref32.gguf";
        ASSERT_EQ(run(cli() + " convert " + quoted(*scratch_ / "zoo/good") + " -o " +
                      quoted(ref32) + " -q --outtype f32")
                      .exit_code,
                  0);
        reference_f32_ = new std::string(read_file(ref32));
    }
    static void TearDownTestSuite() {
        delete reference_;
        delete reference_f32_;
        delete scratch_;
    }

    // The fixture manifest beside the sources: a header, relative source dirs, an empty and an
    // absent options column.
    static fs::path write_manifest() {
        const fs::path manifest = *scratch_ / "zoo/models.tsv";
        write_file(manifest,
                   "# source\tname\toptions\n"
                   "good\tgood-auto\n"
                   "blocked\tblocked\t\n"
                   "garbage\tgarbage\n"
                   "absent\tabsent\n"
                   "good\tgood-f32\t--outtype f32 -t 1\n"
                   "good\tbad-option\t--bogus\n");
        return manifest;
    }
    RunResult batch(const fs::path& manifest, const fs::path& out, const std::string& extra,
                    const std::string& env = "") const {
        return run("env -u JOB_COMPLETION_INDEX -u SLURM_ARRAY_TASK_ID " + env + " " + cli() +
                   " batch " + quoted(manifest) + " --out " + quoted(out) + " " + extra);
    }
    static json report(const fs::path& path) { return json::parse(read_file(path)); }

    static inline ScratchDir* scratch_ = nullptr;
    static inline std::string* reference_ = nullptr;
    static inline std::string* reference_f32_ = nullptr;
};

TEST_F(BatchCli, EveryIndexGivesItsDocumentedExitCodeAndReport) {
    const ScratchDir dir;
    const fs::path manifest = write_manifest();
    const fs::path out = dir / "out";

    const RunResult good = batch(manifest, out, "--index 0");
    EXPECT_EQ(good.exit_code, 0) << good.output;
    EXPECT_EQ(read_file(out / "good-auto.gguf"), *reference_);
    const json ok = report(out / "good-auto.json");
    EXPECT_EQ(ok["written"], true);
    EXPECT_EQ(ok["verification"]["ok"], true);
    EXPECT_FALSE(ok.contains("exit_code"));
    EXPECT_EQ(ok["output_bytes"], reference_->size());

    const auto expect_failure = [&](int index, const std::string& name, int code,
                                    const std::string& in_message) {
        const RunResult r = batch(manifest, out, "--index " + std::to_string(index));
        EXPECT_EQ(r.exit_code, code) << r.output;
        EXPECT_FALSE(fs::exists(out / (name + ".gguf"))) << name;
        ASSERT_TRUE(fs::exists(out / (name + ".json"))) << name << ": " << r.output;
        const json record = report(out / (name + ".json"));
        EXPECT_EQ(record["exit_code"], code) << record.dump();
        EXPECT_EQ(record["batch"]["index"], index);
        EXPECT_EQ(record["batch"]["manifest_line"], index + 2);  // 1-based, after the header
        EXPECT_TRUE(record["seconds"].is_number());
        EXPECT_NE(record["message"].get<std::string>().find(in_message), std::string::npos)
            << record.dump();
    };
    expect_failure(1, "blocked", 2, "BLOCKER");
    expect_failure(2, "garbage", 1, "model.safetensors");
    expect_failure(3, "absent", 1, "absent");
    expect_failure(5, "bad-option", 1, "line 7: options column");

    const RunResult f32 = batch(manifest, out, "--index 4");
    EXPECT_EQ(f32.exit_code, 0) << f32.output;
    EXPECT_EQ(read_file(out / "good-f32.gguf"), *reference_f32_);
    EXPECT_EQ(report(out / "good-f32.json")["outtype"], "f32");

    const size_t files_before = std::distance(fs::directory_iterator(out), {});
    const RunResult past = batch(manifest, out, "--index 6");
    EXPECT_EQ(past.exit_code, 4) << past.output;
    EXPECT_NE(past.err.find("index 6 (from --index) is past the last model line"),
              std::string::npos)
        << past.err;
    EXPECT_EQ(size_t(std::distance(fs::directory_iterator(out), {})), files_before);

    const RunResult summary =
        run(cli() + " batch " + quoted(manifest) + " --summary " + quoted(out));
    EXPECT_EQ(summary.exit_code, 1) << summary.output;
    EXPECT_NE(
        summary.out.find("0\tgood-auto\tok\t" + std::to_string(reference_->size()) + " bytes"),
        std::string::npos)
        << summary.out;
    EXPECT_NE(summary.out.find("1\tblocked\tFAILED (exit 2)"), std::string::npos) << summary.out;
    EXPECT_NE(summary.out.find("3\tabsent\tFAILED (exit 1)"), std::string::npos) << summary.out;
    EXPECT_NE(summary.out.find("2 of 6 ok, 4 failed, 0 missing or incomplete"), std::string::npos)
        << summary.out;
}

TEST_F(BatchCli, SummaryIsZeroOnlyWhenEveryModelIsDone) {
    const ScratchDir dir;
    const fs::path manifest = dir / "two.tsv";
    write_file(manifest, (*scratch_ / "zoo/good").string() + "\tone\n" +
                             (*scratch_ / "zoo/good").string() + "\ttwo\t--outtype f32\n");
    const fs::path out = dir / "out";
    const auto summary = [&] {
        return run(cli() + " batch " + quoted(manifest) + " --summary " + quoted(out));
    };
    ASSERT_EQ(batch(manifest, out, "--index 0").exit_code, 0);
    const RunResult half = summary();
    EXPECT_EQ(half.exit_code, 1) << half.output;
    EXPECT_NE(half.out.find("1\ttwo\tMISSING"), std::string::npos) << half.out;
    ASSERT_EQ(batch(manifest, out, "--index 1").exit_code, 0);
    const RunResult all = summary();
    EXPECT_EQ(all.exit_code, 0) << all.output;
    EXPECT_NE(all.out.find("2 of 2 ok"), std::string::npos) << all.out;
    // A GGUF cut short after its report was written is not done.
    fs::resize_file(out / "two.gguf", 100);
    const RunResult cut = summary();
    EXPECT_EQ(cut.exit_code, 1) << cut.output;
    EXPECT_NE(cut.out.find("1\ttwo\tINCOMPLETE"), std::string::npos) << cut.out;
}

struct FileStamp {
    ino_t inode;
    timespec mtime;
};
FileStamp stamp(const fs::path& path) {
    struct stat info {};
    EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
    return {info.st_ino, info.st_mtim};
}
bool same(const FileStamp& a, const FileStamp& b) {
    return a.inode == b.inode && a.mtime.tv_sec == b.mtime.tv_sec &&
           a.mtime.tv_nsec == b.mtime.tv_nsec;
}

TEST_F(BatchCli, RepeatedIndexIsANoOpAndAnUnreportedGgufIsRedone) {
    const ScratchDir dir;
    const fs::path manifest = write_manifest();
    const fs::path out = dir / "out";
    ASSERT_EQ(batch(manifest, out, "--index 0").exit_code, 0);
    const FileStamp gguf = stamp(out / "good-auto.gguf");
    const FileStamp json_report = stamp(out / "good-auto.json");
    const RunResult again = batch(manifest, out, "--index 0");
    EXPECT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.out.find("already converted"), std::string::npos) << again.out;
    EXPECT_TRUE(same(stamp(out / "good-auto.gguf"), gguf));
    EXPECT_TRUE(same(stamp(out / "good-auto.json"), json_report));

    // A pod killed between the GGUF and the report: a (here truncated) GGUF, no report.
    fs::remove(out / "good-auto.json");
    fs::resize_file(out / "good-auto.gguf", 1000);
    const RunResult redo = batch(manifest, out, "--index 0");
    EXPECT_EQ(redo.exit_code, 0) << redo.output;
    EXPECT_EQ(redo.out.find("already converted"), std::string::npos) << redo.out;
    EXPECT_EQ(read_file(out / "good-auto.gguf"), *reference_);
    EXPECT_EQ(report(out / "good-auto.json")["verification"]["ok"], true);

    // A failed index is retried (its record is not a success), and fails the same way; a GGUF an
    // earlier run left under that name does not stay beside the failure record.
    ASSERT_EQ(batch(manifest, out, "--index 1").exit_code, 2);
    write_file(out / "blocked.gguf", std::string("GGUF from an earlier run"));
    EXPECT_EQ(batch(manifest, out, "--index 1").exit_code, 2);
    EXPECT_FALSE(fs::exists(out / "blocked.gguf"));
    EXPECT_EQ(report(out / "blocked.json")["exit_code"], 2);
}

// A multimodal checkpoint: the index's outputs are the text model and mmproj-NAME.gguf beside it.
// A finished pair is a no-op; a missing projector makes the index unfinished (until now only the
// text model's files were checked, so a lost projector passed as done); a pod killed after the
// pair's commit but before the report leaves both files, and the redo replaces both.
TEST_F(BatchCli, MultimodalPairIsPartOfTheIndex) {
    const ScratchDir dir;
    const fs::path model = dir / "zoo/vision";
    ASSERT_EQ(run(quoted(mkfixture_cli()) + " " + quoted(model) +
                  " --preset tiny --tokenizer small --arch gemma3 --multimodal --format float")
                  .exit_code,
              0);
    const fs::path manifest = dir / "zoo/models.tsv";
    write_file(manifest, "vision\tvision\n");
    const fs::path out = dir / "out";
    ASSERT_EQ(batch(manifest, out, "--index 0").exit_code, 0);
    ASSERT_TRUE(fs::exists(out / "mmproj-vision.gguf"));
    const std::string projector = read_file(out / "mmproj-vision.gguf");
    EXPECT_NE(batch(manifest, out, "--index 0").out.find("already converted"), std::string::npos);

    fs::remove(out / "mmproj-vision.gguf");  // the projector lost: not done
    RunResult redo = batch(manifest, out, "--index 0");
    EXPECT_EQ(redo.exit_code, 0) << redo.output;
    EXPECT_EQ(redo.out.find("already converted"), std::string::npos) << redo.out;
    EXPECT_EQ(read_file(out / "mmproj-vision.gguf"), projector);

    fs::remove(out / "vision.json");  // killed between the commit and the report
    redo = batch(manifest, out, "--index 0");
    EXPECT_EQ(redo.exit_code, 0) << redo.output;
    EXPECT_EQ(read_file(out / "mmproj-vision.gguf"), projector);
    EXPECT_EQ(report(out / "vision.json")["verification"]["ok"], true);
}

TEST_F(BatchCli, IndexPrecedenceFlagThenJobCompletionIndexThenSlurm) {
    const ScratchDir dir;
    const fs::path manifest = write_manifest();
    const fs::path out = dir / "out";
    // Index 0 converts (exit 0), index 1 is the BLOCKER (exit 2): the code shows which was used.
    EXPECT_EQ(batch(manifest, out, "", "JOB_COMPLETION_INDEX=1 SLURM_ARRAY_TASK_ID=0").exit_code,
              2);
    EXPECT_EQ(batch(manifest, out, "--index 0", "JOB_COMPLETION_INDEX=1").exit_code, 0);
    EXPECT_EQ(batch(manifest, out, "", "SLURM_ARRAY_TASK_ID=1").exit_code, 2);
    EXPECT_EQ(batch(manifest, out, "", "JOB_COMPLETION_INDEX= SLURM_ARRAY_TASK_ID=0").exit_code, 0);
    const RunResult bad = batch(manifest, out, "", "JOB_COMPLETION_INDEX=one");
    EXPECT_EQ(bad.exit_code, 1) << bad.output;
    EXPECT_NE(bad.err.find("JOB_COMPLETION_INDEX"), std::string::npos) << bad.err;
}

TEST_F(BatchCli, NoIndexAnywhereWritesNothing) {
    const ScratchDir dir;
    const fs::path manifest = write_manifest();
    const fs::path out = dir / "never";
    const RunResult none = batch(manifest, out, "");
    EXPECT_EQ(none.exit_code, 1) << none.output;
    EXPECT_NE(none.err.find("no index"), std::string::npos) << none.err;
    EXPECT_FALSE(fs::exists(out));
    const RunResult neither = run(cli() + " batch " + quoted(manifest));
    EXPECT_EQ(neither.exit_code, 1) << neither.output;
}

TEST_F(BatchCli, MalformedManifestIsOneLineAndWritesNothing) {
    const ScratchDir dir;
    const fs::path manifest = dir / "broken.tsv";
    write_file(manifest, "a\tone\na\tone\n");
    const fs::path out = dir / "out";
    const RunResult r = batch(manifest, out, "--index 0");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.err.find("broken.tsv: line 2: output name 'one' is also on line 1"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace rebox::test
