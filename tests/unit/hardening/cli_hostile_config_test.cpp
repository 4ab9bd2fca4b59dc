// Hostile config.json counts as a user meets them: `rebox plan` and `rebox verify` on a tiny
// checkpoint whose config.json claims 1e9 layers, a huge expert count, a huge head_dim with llama3
// rope, zero, negative or non-integer values. Each exits 1 with one line naming the key, without
// std::bad_alloc, in well under a second of CPU and under 64 MB peak RSS (measured by /usr/bin/time
// for the rebox process alone; CPU time rather than wall time, so a loaded machine does not fail
// it).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

// The bound: 64 MB of peak RSS for any hostile config (allocating from a hostile count
// would take gigabytes). Under AddressSanitizer (scripts/sanitize.sh) the same run carries ASan's
// shadow memory and quarantine, about 1.5x here, so the bound there is 4x.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kPeakRssLimitKb = 4 * 64 * 1024;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr long kPeakRssLimitKb = 4 * 64 * 1024;
#else
constexpr long kPeakRssLimitKb = 64 * 1024;
#endif
#else
constexpr long kPeakRssLimitKb = 64 * 1024;
#endif

namespace fs = std::filesystem;
using nlohmann::json;
using test::quoted;

struct Measured {
    test::RunResult run;
    long peak_rss_kb = -1;
    double cpu_seconds = -1, wall_seconds = -1;
};

// Runs rebox ARGS under /usr/bin/time (its numbers go to a file, so stderr is rebox's alone).
Measured run_measured(const fs::path& work, const std::string& args) {
    const fs::path times = work / "time.txt";
    Measured m;
    m.run = test::run("/usr/bin/time -f '%M %U %S %e' -o " + quoted(times) + " " +
                      quoted(test::rebox_cli()) + " " + args);
    // time(1) writes "Command exited with non-zero status N" first: the numbers are the last line.
    std::string text = test::read_file(times);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    std::istringstream in(
        text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1));
    double user = 0, sys = 0;
    in >> m.peak_rss_kb >> user >> sys >> m.wall_seconds;
    m.cpu_seconds = user + sys;
    return m;
}

class HostileConfig : public ::testing::Test {
  protected:
    // A fixture of the arch (mkfixture flags) and its own good conversion.
    void make(const std::string& flags) {
        ASSERT_EQ(test::run_mkfixture(model_, "--preset tiny " + flags), 0);
        ASSERT_EQ(test::run(quoted(test::rebox_cli()) + " convert " + quoted(model_) + " -q -o " +
                            quoted(gguf_))
                      .exit_code,
                  0);
        good_config_ = json::parse(test::read_file(model_ / "config.json"));
    }
    // Writes config.json with key = value, then checks plan and verify refuse it as promised.
    void expect_refused(const std::string& key, const json& value,
                        const std::string& extra_key = "", const json& extra_value = nullptr) {
        SCOPED_TRACE(key + " = " + value.dump());
        json config = good_config_;
        config[key] = value;
        if (!extra_key.empty()) config[extra_key] = extra_value;
        std::ofstream(model_ / "config.json") << config.dump();
        for (const std::string& command :
             {"plan " + quoted(model_), "verify " + quoted(model_) + " " + quoted(gguf_)}) {
            SCOPED_TRACE(command);
            const Measured m = run_measured(work_, command);
            EXPECT_EQ(m.run.exit_code, 1) << m.run.err;
            EXPECT_EQ(std::count(m.run.err.begin(), m.run.err.end(), '\n'), 1) << m.run.err;
            EXPECT_NE(m.run.err.find("config.json: " + key + ": "), std::string::npos) << m.run.err;
            EXPECT_EQ(m.run.err.find("bad_alloc"), std::string::npos) << m.run.err;
            EXPECT_GT(m.peak_rss_kb, 0);
            EXPECT_LT(m.peak_rss_kb, kPeakRssLimitKb) << "peak RSS " << m.peak_rss_kb << " KB";
            EXPECT_GE(m.cpu_seconds, 0);
            EXPECT_LT(m.cpu_seconds, 1.0) << "CPU seconds";
            EXPECT_LT(m.wall_seconds, 20.0) << "wall seconds (generous: the machine may be loaded)";
        }
        std::ofstream(model_ / "config.json") << good_config_.dump();
    }
    test::ScratchDir scratch_;
    fs::path work_ = scratch_.path();
    fs::path model_ = work_ / "model";
    fs::path gguf_ = work_ / "model.gguf";
    json good_config_;
};

TEST_F(HostileConfig, DenseCountsBeyondCapsOrTensors) {
    make("");
    expect_refused("num_hidden_layers", 1000000000);   // beyond the cap
    expect_refused("num_hidden_layers", 4000);         // under the cap, beyond the 24 tensors
    expect_refused("vocab_size", 16000000);            // beyond every tensor dimension
    expect_refused("intermediate_size", 4000000000u);  // beyond the cap
    expect_refused("hidden_size", 1u << 25);
    expect_refused("num_attention_heads", 70000);
    expect_refused("max_position_embeddings", 4000000000u);
}

TEST_F(HostileConfig, ZeroNegativeAndNonIntegerCounts) {
    make("");
    expect_refused("vocab_size", 0);
    expect_refused("num_attention_heads", -4);
    expect_refused("num_hidden_layers", 2.5);
    expect_refused("num_hidden_layers", "2");
    expect_refused("head_dim", json::array({16}));
}

TEST_F(HostileConfig, HugeHeadDimWithLlama3Rope) {
    make("--arch llama --rope-scaling llama3");
    expect_refused("head_dim", 1000000000);  // beyond the cap
    expect_refused("head_dim", 60000);       // under the cap, beyond every tensor dimension
}

TEST_F(HostileConfig, HugeExpertCounts) {
    make("--arch qwen3_moe");
    expect_refused("num_experts", 1000000000);
    expect_refused("num_experts", 60000, "num_experts_per_tok", 2);  // beyond tensors and dims
    expect_refused("num_experts_per_tok", 1000000000);
}

// rope_scaling lists size arrays from config.json itself: a list filling config.json's 1 MiB cap
// still parses small and fast (refused: wrong length for the rope), one past the cap is refused
// from the file size alone.
TEST_F(HostileConfig, LongRopeFactorListsStaySmall) {
    make("--arch phi3 --rope-scaling longrope");
    for (const size_t entries : {size_t{250000}, size_t{600000}}) {
        SCOPED_TRACE(entries);
        json config = good_config_;
        config["rope_scaling"]["long_factor"] = std::vector<int>(entries, 1);
        const std::string text = config.dump();
        std::ofstream(model_ / "config.json") << text;
        const Measured m = run_measured(work_, "plan " + quoted(model_));
        EXPECT_NE(m.run.exit_code, 0) << m.run.err;
        EXPECT_EQ(m.run.err.find("bad_alloc"), std::string::npos) << m.run.err;
        EXPECT_LT(m.peak_rss_kb, kPeakRssLimitKb) << "peak RSS " << m.peak_rss_kb << " KB";
        EXPECT_LT(m.cpu_seconds, 1.0) << "CPU seconds";
        if (text.size() > (size_t{1} << 20)) {
            EXPECT_EQ(m.run.exit_code, 1);
            EXPECT_NE(m.run.err.find("over rebox's 1 MiB limit"), std::string::npos) << m.run.err;
        }
    }
}

}  // namespace
}  // namespace rebox
