// AtomicOutput and the temporaries a SIGKILLed run leaves behind: stale ones of the same target are
// removed, those of live processes and of other targets are left alone, and a stale temporary that
// carries our own pid (pid reuse) no longer blocks the output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "format/atomic_output.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

class StaleTempTest : public ::testing::Test {
  protected:
    void SetUp() override { target_ = dir_ / "out.gguf"; }

    fs::path temp_of(const std::string& target_name, pid_t pid) const {
        return dir_ / (target_name + ".rebox-tmp-" + std::to_string(pid));
    }
    static void touch(const fs::path& path) { std::ofstream(path) << "partial"; }

    // A pid that belonged to a process that has exited and been reaped.
    static pid_t dead_pid() {
        const pid_t child = ::fork();
        if (child == 0) ::_exit(0);
        int status = 0;
        ::waitpid(child, &status, 0);
        return child;
    }

    test::ScratchDir scratch_;
    fs::path dir_ = scratch_.path(), target_;
};

TEST_F(StaleTempTest, TemporaryOfADeadProcessIsRemoved) {
    const fs::path stale = temp_of("out.gguf", dead_pid());
    touch(stale);
    AtomicOutput out(target_, false);
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_TRUE(fs::exists(out.temp_path()));
}

TEST_F(StaleTempTest, TemporaryOfALiveProcessIsKept) {
    const fs::path live = temp_of("out.gguf", ::getppid());
    touch(live);
    { AtomicOutput out(target_, false); }
    EXPECT_TRUE(fs::exists(live));
}

TEST_F(StaleTempTest, TemporaryOfAnotherTargetIsKept) {
    const pid_t pid = dead_pid();
    const fs::path other = temp_of("other.gguf", pid);
    const fs::path longer = temp_of("out.gguf.bak", pid);
    touch(other);
    touch(longer);
    { AtomicOutput out(target_, false); }
    EXPECT_TRUE(fs::exists(other));
    EXPECT_TRUE(fs::exists(longer));
}

TEST_F(StaleTempTest, NamesThatAreNotPidsAreKept) {
    const fs::path odd = dir_ / "out.gguf.rebox-tmp-12ab";
    touch(odd);
    { AtomicOutput out(target_, false); }
    EXPECT_TRUE(fs::exists(odd));
}

// Before stale cleanup, a leftover with our own pid made O_EXCL fail: "cannot create".
TEST_F(StaleTempTest, LeftoverWithOurOwnPidDoesNotBlockTheOutput) {
    const fs::path ours = temp_of("out.gguf", ::getpid());
    touch(ours);
    AtomicOutput out(target_, false);
    out.resize(3);
    out.commit();
    EXPECT_EQ(fs::file_size(target_), 3u);
    EXPECT_FALSE(fs::exists(ours));
}

// A second output of the same target in this process must not delete the first one's live file.
TEST_F(StaleTempTest, LiveTemporaryOfThisProcessIsNotTakenForStale) {
    AtomicOutput first(target_, true);
    EXPECT_THROW(AtomicOutput second(target_, true), Error);
    EXPECT_TRUE(fs::exists(first.temp_path()));
}

}  // namespace
}  // namespace rebox
