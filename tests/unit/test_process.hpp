// The one process runner of the tests that drive the built command-line tools (rebox,
// rebox-mkfixture): run a shell command and capture its exit code and output. A test file that
// includes this header runs executables, so tests/CMakeLists.txt puts it into rebox_cli_tests
// (label `cli`); every other test file goes into rebox_unit_tests (label `unit`).
#pragma once

#include <filesystem>
#include <string>

#include "test_paths.hpp"

namespace rebox::test {

struct RunResult {
    // The command's exit status; 128 + N when a signal N killed it (as a shell reports it, so
    // never 0), -1 when it could not be started.
    int exit_code = -1;
    std::string output;  // stdout and stderr together, in the order they arrived
    std::string out;     // stdout alone
    std::string err;     // stderr alone
};

// Runs `command` through /bin/sh -c, stdin from /dev/null, reading stdout and stderr through two
// pipes until both close, then waiting for the shell. Defined in test_process.cpp, which only
// rebox_cli_tests links: a test in rebox_unit_tests that calls it does not link.
RunResult run(const std::string& command);

// A path in single quotes for a shell command line.
inline std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

// Runs rebox-mkfixture OUT_DIR --force ARGS and returns its exit code.
inline int run_mkfixture(const std::filesystem::path& out_dir, const std::string& args) {
    return run(quoted(mkfixture_cli()) + " " + quoted(out_dir) + " --force " + args).exit_code;
}

}  // namespace rebox::test
