// Shared setup for the `rebox meta / diff / hash` CLI tests: a scratch folder per test holding a
// converted tiny fixture (rebox-mkfixture + rebox convert), and helpers to run the CLI and
// fingerprint files (to prove that refused commands left their inputs untouched).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox::test {

class GgufToolTest : public ::testing::Test {
  protected:
    // Converts the tiny fixture once per test; outtype "q4_1" or "f32".
    std::filesystem::path converted(const std::string& name, const std::string& outtype = "q4_1") {
        const auto model = dir_ / "model";
        if (!std::filesystem::exists(model)) {
            const auto made =
                run(quoted(mkfixture_cli()) + " " + quoted(model) + " --preset tiny --force");
            EXPECT_EQ(made.exit_code, 0) << made.output;
        }
        const auto out = dir_ / name;
        const auto conv = run(quoted(rebox_cli()) + " convert " + quoted(model) + " -o " +
                              quoted(out) + " --quiet --outtype " + outtype);
        EXPECT_EQ(conv.exit_code, 0) << conv.output;
        return out;
    }

    RunResult rebox(const std::string& args) { return run(quoted(rebox_cli()) + " " + args); }

    ScratchDir scratch_;
    std::filesystem::path dir_ = scratch_.path();
};

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Number of '\n'-terminated lines.
inline size_t line_count(const std::string& text) {
    size_t n = 0;
    for (char c : text) n += c == '\n';
    return n;
}

}  // namespace rebox::test
