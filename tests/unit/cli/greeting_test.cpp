// What a newcomer sees first: `rebox --help` (the command list on stdout, exit 0: the 12 commands
// of the README's table, one line each, and nothing else), a bare `rebox` (the same list on
// stderr, exit 1: a usage error), `rebox COMMAND --help` for each command (its own usage, exit 0),
// `rebox --version` ("rebox 0.1.0", the version CMakeLists.txt's project() declares; the same
// string is the rebox.version KV of a written GGUF), and the convert line naming every input
// format source/read_source.cpp detects.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

// Every command the README's table lists.
const std::vector<std::string> kCommands = {"convert", "batch", "plan",  "verify",
                                            "inspect", "split", "merge", "quantize",
                                            "meta",    "diff",  "hash",  "check"};

class Greeting : public ::testing::Test {
  protected:
    test::RunResult run(const std::string& args) {
        return test::run(test::quoted(test::rebox_cli()) + args);
    }
};

// One line per command: "  NAME  description", and each command on exactly one line.
void expect_command_list(const std::string& text) {
    for (const std::string& name : kCommands) {
        const std::string line_start = "\n  " + name + " ";
        const size_t at = text.find(line_start);
        ASSERT_NE(at, std::string::npos) << "no line for '" << name << "' in:\n" << text;
        EXPECT_EQ(text.find(line_start, at + 1), std::string::npos) << name << " listed twice";
        const size_t end = text.find('\n', at + 1);
        EXPECT_GT(end - at, line_start.size() + 10) << "no description for " << name;
    }
    EXPECT_NE(text.find("--version"), std::string::npos);
    // Nothing but these: the lines between "Commands:" and "Options:" are the 12.
    const size_t begin = text.find("Commands:\n"), end = text.find("\nOptions:");
    ASSERT_NE(begin, std::string::npos) << text;
    ASSERT_NE(end, std::string::npos) << text;
    size_t lines = 0;
    for (size_t at = text.find("\n  ", begin); at < end; at = text.find("\n  ", at + 1)) ++lines;
    EXPECT_EQ(lines, kCommands.size()) << text;
}

TEST_F(Greeting, HelpListsEveryCommandOnStdoutAndExitsZero) {
    const auto r = run(" --help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.err, "");
    expect_command_list(r.out);
    EXPECT_EQ(run(" -h").out, r.out);
}

TEST_F(Greeting, BareReboxIsAUsageErrorWithTheSameList) {
    const auto bare = run("");
    EXPECT_EQ(bare.exit_code, 1);
    EXPECT_EQ(bare.out, "");
    EXPECT_EQ(bare.err, run(" --help").out);
}

TEST_F(Greeting, VersionIsTheProjectVersion) {
    const auto r = run(" --version");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, "rebox 0.1.0\n");  // CMakeLists.txt: project(rebox VERSION 0.1.0)
    EXPECT_EQ(r.err, "");
}

// The input formats read_source_model tells apart (source/read_source.cpp): all nine by name.
TEST_F(Greeting, ConvertLineNamesEveryInputFormat) {
    const auto r = run(" --help");
    const size_t at = r.out.find("\n  convert ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    for (const char* format :
         {"mcq-v1", "MLX", "GPTQ", "AWQ", "compressed-tensors,", "compressed-tensors FP4",
          "ModelOpt NVFP4", "gpt-oss MXFP4", "float"})
        EXPECT_NE(line.find(format), std::string::npos) << format << " missing from: " << line;
}

TEST_F(Greeting, EveryCommandHasItsOwnHelp) {
    for (const std::string& name : kCommands) {
        const auto r = run(" " + name + " --help");
        EXPECT_EQ(r.exit_code, 0) << name << ": " << r.output;
        EXPECT_NE(r.out.find("Usage:"), std::string::npos) << name << ": " << r.out;
        EXPECT_NE(r.out.find(name), std::string::npos) << name << ": " << r.out;
        EXPECT_NE(r.out.find("--help"), std::string::npos) << name << ": " << r.out;
    }
}

TEST_F(Greeting, UnknownCommandStillNamesTheCommands) {
    const auto r = run(" frobnicate");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos) << r.err;
    for (const std::string& name : kCommands)
        EXPECT_NE(r.err.find(" " + name), std::string::npos) << name << " not named: " << r.err;
}

}  // namespace
}  // namespace rebox
