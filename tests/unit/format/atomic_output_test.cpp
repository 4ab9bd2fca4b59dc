// AtomicOutput: the target appears whole on commit or not at all; temporaries never outlive it.
#include "format/atomic_output.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

class AtomicOutputTest : public ::testing::Test {
  protected:
    void SetUp() override {
        target_ = dir_ / "out.gguf";
        expected_temp_ = dir_ / ("out.gguf.rebox-tmp-" + std::to_string(::getpid()));
    }

    size_t entries_in_dir() const {
        return static_cast<size_t>(
            std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
    }

    test::ScratchDir scratch_;
    fs::path dir_ = scratch_.path(), target_, expected_temp_;
};

std::span<const uint8_t> as_bytes(const std::string& text) {
    return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

TEST_F(AtomicOutputTest, CommitMakesTargetAppearWithTheBytes) {
    {
        AtomicOutput out(target_, false);
        EXPECT_EQ(out.temp_path(), expected_temp_);
        EXPECT_TRUE(fs::exists(expected_temp_));
        out.resize(10);
        out.pwrite(as_bytes("world"), 5);  // out of order: ranges land where asked
        out.pwrite(as_bytes("hello"), 0);
        EXPECT_FALSE(fs::exists(target_));  // nothing visible before commit
        out.commit();
        EXPECT_FALSE(fs::exists(expected_temp_));
    }
    EXPECT_EQ(test::read_file(target_), "helloworld");
    EXPECT_EQ(entries_in_dir(), 1u);
    EXPECT_EQ(fs::status(target_).permissions() & fs::perms::owner_write, fs::perms::owner_write);
}

TEST_F(AtomicOutputTest, ResizeLeavesUnwrittenRangesZero) {
    {
        AtomicOutput out(target_, false);
        out.resize(6);
        out.pwrite(as_bytes("ab"), 2);
        out.commit();
    }
    EXPECT_EQ(test::read_file(target_), std::string("\0\0ab\0\0", 6));
}

TEST_F(AtomicOutputTest, DestroyWithoutCommitLeavesNothing) {
    {
        AtomicOutput out(target_, false);
        out.pwrite(as_bytes("partial"), 0);
        out.sync();
        EXPECT_TRUE(fs::exists(expected_temp_));
    }
    EXPECT_FALSE(fs::exists(target_));
    EXPECT_FALSE(fs::exists(expected_temp_));
    EXPECT_EQ(entries_in_dir(), 0u);
}

TEST_F(AtomicOutputTest, DiscardIsIdempotentAndBlocksCommit) {
    AtomicOutput out(target_, false);
    out.discard();
    EXPECT_FALSE(fs::exists(expected_temp_));
    out.discard();
    EXPECT_THROW(out.commit(), Error);
    EXPECT_FALSE(fs::exists(target_));
}

TEST_F(AtomicOutputTest, RefusesExistingTargetWithoutOverwrite) {
    test::write_file(target_, "old");
    try {
        AtomicOutput out(target_, false);
        FAIL() << "existing target accepted";
    } catch (const Error& error) {
        EXPECT_EQ(error.exit_class(), ExitClass::input);
        EXPECT_EQ(std::string(error.what()),
                  target_.string() + ": exists (use --force to replace)");
    }
    EXPECT_EQ(test::read_file(target_), "old");
    EXPECT_FALSE(fs::exists(expected_temp_));
}

TEST_F(AtomicOutputTest, TargetAppearingBeforeCommitIsNotReplaced) {
    AtomicOutput out(target_, false);
    out.pwrite(as_bytes("new"), 0);
    test::write_file(target_, "someone else's");
    try {
        out.commit();
        FAIL() << "target replaced";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("exists (use --force to replace)"),
                  std::string::npos);
    }
    EXPECT_EQ(test::read_file(target_), "someone else's");
}

TEST_F(AtomicOutputTest, OverwriteReplacesOnlyAtCommit) {
    test::write_file(target_, "old contents");
    {
        AtomicOutput out(target_, true);
        out.pwrite(as_bytes("new"), 0);
        EXPECT_EQ(test::read_file(target_), "old contents");
        out.commit();
    }
    EXPECT_EQ(test::read_file(target_), "new");
    EXPECT_EQ(entries_in_dir(), 1u);
}

TEST_F(AtomicOutputTest, SignalCleanupRemovesLiveTemporaries) {
    AtomicOutput first(target_, false);
    AtomicOutput second(dir_ / "other.gguf", false);
    first.pwrite(as_bytes("x"), 0);
    ASSERT_TRUE(fs::exists(first.temp_path()));
    ASSERT_TRUE(fs::exists(second.temp_path()));
    remove_pending_outputs_from_signal();
    EXPECT_FALSE(fs::exists(first.temp_path()));
    EXPECT_FALSE(fs::exists(second.temp_path()));
    EXPECT_EQ(entries_in_dir(), 0u);
}

TEST_F(AtomicOutputTest, SignalCleanupSparesCommittedAndDiscardedOutputs) {
    {
        AtomicOutput done(target_, false);
        done.pwrite(as_bytes("kept"), 0);
        done.commit();
    }
    // A stale file at a discarded output's temp path is not ours any more: must not be removed.
    const fs::path other = dir_ / "other.gguf";
    fs::path stale_temp;
    {
        AtomicOutput gone(other, false);
        stale_temp = gone.temp_path();
    }
    test::write_file(stale_temp, "not ours");
    remove_pending_outputs_from_signal();
    EXPECT_EQ(test::read_file(target_), "kept");
    EXPECT_TRUE(fs::exists(stale_temp));
}

TEST_F(AtomicOutputTest, MissingFolderIsAnInputError) {
    try {
        AtomicOutput out(dir_ / "no-such-dir" / "out.gguf", false);
        FAIL();
    } catch (const Error& error) {
        EXPECT_EQ(error.exit_class(), ExitClass::input);
        EXPECT_NE(std::string(error.what()).find(": cannot create: no such file or directory"),
                  std::string::npos)
            << error.what();
    }
}

// A file size limit makes the kernel write short and then fail with EFBIG: the loop must continue
// after the short write and report the failure (strerror text, input class) instead of dropping
// bytes.
TEST_F(AtomicOutputTest, WriteFailureAfterShortWriteIsReported) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        int code = 10;
        try {
            AtomicOutput out(target_, false);
            const std::vector<uint8_t> data(8192, 0x5a);
            try {
                out.pwrite(data, 0);
                code = 11;
            } catch (const Error& error) {
                const std::string message = error.what();
                const bool exact =
                    error.exit_class() == ExitClass::input &&
                    message.find("cannot write 4096 bytes at offset 4096: file too large") !=
                        std::string::npos;
                code = exact && fs::file_size(out.temp_path()) == 4096 ? 0 : 12;
            }
        } catch (...) {
            code = 13;
        }
        ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "10 unexpected, 11 no error, 12 wrong message, 13 other exception";
    EXPECT_FALSE(fs::exists(target_));
    EXPECT_EQ(entries_in_dir(), 0u);  // the child's destructor removed its temporary
}

}  // namespace
}  // namespace rebox
