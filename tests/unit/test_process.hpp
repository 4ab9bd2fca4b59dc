// Helpers for tests that drive the built command-line tools: run a shell command capturing its exit
// code and combined output, quote paths, read and write whole files.
#pragma once

#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace rebox::test {

struct RunResult {
    int exit_code = -1;
    std::string output;  // stdout and stderr together
};

// Runs `command` through the shell; its output goes through `log` (kept for inspection).
inline RunResult run_command(const std::string& command, const std::filesystem::path& log) {
    const int status = std::system((command + " > '" + log.string() + "' 2>&1").c_str());
    RunResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    result.output = text.str();
    return result;
}

// Runs `command` through the shell and captures stdout and stderr together through a pipe.
struct CliRun {
    int status = -1;
    std::string output;
};
inline CliRun run_captured(const std::string& command) {
    CliRun r;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return r;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
    const int status = ::pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

inline std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

// A whole file as text ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Runs `command` through the shell with stdout and stderr kept apart, each through a file in
// `dir` (stdout.txt, stderr.txt: kept for inspection, replaced by the next run).
struct StreamsRun {
    int exit_code = -1;
    std::string out;
    std::string err;
};
inline StreamsRun run_streams(const std::string& command, const std::filesystem::path& dir) {
    const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
    const int status = std::system((command + " >" + quoted(out) + " 2>" + quoted(err)).c_str());
    StreamsRun run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = read_text(out);
    run.err = read_text(err);
    return run;
}

inline std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

inline void write_file_bytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

// A fresh, empty scratch folder under the build tree, named for the test.
inline std::filesystem::path scratch_dir(const std::string& name) {
    const auto dir = std::filesystem::path(REBOX_BINARY_DIR) / "test-work" / name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace rebox::test
