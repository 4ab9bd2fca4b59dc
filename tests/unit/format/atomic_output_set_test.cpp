// commit_all and the signal-time cleanup registry: a set of outputs replaces its targets all at
// once (no aside file left), a target that may not be replaced stops the set before anything
// changes, the registry has no fixed size (200 live temporaries all removed), and an install caught
// between its renames is undone by the signal path: the replaced file is back, the new one gone.
#include "format/atomic_output_set.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "format/pending_cleanup.hpp"
#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

std::span<const uint8_t> as_bytes(const std::string& text) {
    return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

class AtomicOutputSetTest : public ::testing::Test {
  protected:
    std::vector<std::string> names() const {
        std::vector<std::string> all;
        for (const auto& e : fs::directory_iterator(dir_)) all.push_back(e.path().filename());
        std::sort(all.begin(), all.end());
        return all;
    }
    // Three outputs s1..s3 holding "new1".."new3".
    std::vector<std::unique_ptr<AtomicOutput>> outputs(bool force) const {
        std::vector<std::unique_ptr<AtomicOutput>> outs;
        for (int i = 1; i <= 3; ++i) {
            outs.push_back(std::make_unique<AtomicOutput>(dir_ / ("s" + std::to_string(i)), force));
            outs.back()->pwrite(as_bytes("new" + std::to_string(i)), 0);
        }
        return outs;
    }
    test::ScratchDir scratch_;
    fs::path dir_ = scratch_.path();
};

TEST_F(AtomicOutputSetTest, ReplacesEveryTargetAndLeavesNoAside) {
    for (int i = 1; i <= 3; ++i) test::write_file(dir_ / ("s" + std::to_string(i)), "old");
    commit_all(outputs(true));
    for (int i = 1; i <= 3; ++i)
        EXPECT_EQ(test::read_file(dir_ / ("s" + std::to_string(i))), "new" + std::to_string(i));
    EXPECT_EQ(names(), (std::vector<std::string>{"s1", "s2", "s3"}));
}

TEST_F(AtomicOutputSetTest, ATargetThatAppearedStopsTheSetAndRollsBack) {
    auto outs = outputs(false);
    test::write_file(dir_ / "s1", "appeared");  // shard 1 is renamed last: s2 and s3 went first
    EXPECT_THROW(commit_all(outs), Error);
    outs.clear();  // the outputs remove their temporaries
    EXPECT_EQ(names(), (std::vector<std::string>{"s1"}));
    EXPECT_EQ(test::read_file(dir_ / "s1"), "appeared");
}

TEST_F(AtomicOutputSetTest, TheRegistryHasNoFixedSize) {
    std::vector<std::unique_ptr<AtomicOutput>> outs;
    for (int i = 0; i < 200; ++i)
        outs.push_back(std::make_unique<AtomicOutput>(dir_ / ("o" + std::to_string(i)), false));
    EXPECT_EQ(names().size(), 200u);
    remove_pending_outputs_from_signal();
    EXPECT_TRUE(names().empty());
}

TEST_F(AtomicOutputSetTest, SignalUndoesAnInstallBetweenItsRenames) {
    const fs::path target = dir_ / "t", aside = dir_ / "t.old";
    std::atomic<bool> complete{false};
    test::write_file(target, "old");
    pending::Entry* entry = pending::add_install(target.string(), aside.string(), &complete);
    fs::rename(target, aside);  // moved aside ...
    pending::set_phase(entry, pending::Phase::installing);
    test::write_file(target, "new");  // ... and the new file in place, but the set is not complete
    remove_pending_outputs_from_signal();
    EXPECT_EQ(test::read_file(target), "old");
    EXPECT_FALSE(fs::exists(aside));
    pending::release(entry);

    // Once the set is complete the signal path keeps the new file and only drops the aside.
    test::write_file(aside, "old");
    test::write_file(target, "new");
    entry = pending::add_install(target.string(), aside.string(), &complete);
    pending::set_phase(entry, pending::Phase::installing);
    complete = true;
    remove_pending_outputs_from_signal();
    EXPECT_EQ(test::read_file(target), "new");
    EXPECT_FALSE(fs::exists(aside));
    pending::release(entry);
}

}  // namespace
}  // namespace rebox
