// The batch manifest parser and index resolution on hand-written input: every hostile line is one
// error that names the manifest and the line, and the index comes from --index, then
// $JOB_COMPLETION_INDEX, then $SLURM_ARRAY_TASK_ID (the order the docs promise).
#include "fleet/manifest.hpp"

#include <gtest/gtest.h>

#include <map>

#include "fleet/batch_index.hpp"
#include "rebox/error.hpp"

namespace rebox::fleet {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::string& text) {
    try {
        parse_manifest(text, "zoo/models.tsv");
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_code(), 1);
        return e.what();
    }
    return "";
}

TEST(BatchManifest, HeaderRelativeAbsoluteAndOptionColumns) {
    const Manifest m = parse_manifest(
        "# source\tname\toptions\r\n"
        "a/b\tfirst\t--outtype  f32   -t 1 \r\n"
        "/abs/dir\tsecond\t\n"
        "c\tthird",
        "zoo/models.tsv");
    ASSERT_EQ(m.entries.size(), 3u);
    EXPECT_EQ(m.entries[0].line_number, 2u);
    EXPECT_EQ(m.entries[0].source_dir, fs::path("zoo/a/b"));
    EXPECT_EQ(m.entries[0].name, "first");
    EXPECT_EQ(m.entries[0].options, (std::vector<std::string>{"--outtype", "f32", "-t", "1"}));
    EXPECT_EQ(m.entries[1].source_dir, fs::path("/abs/dir"));
    EXPECT_TRUE(m.entries[1].options.empty());
    EXPECT_EQ(m.entries[2].source_dir, fs::path("zoo/c"));
    EXPECT_TRUE(m.entries[2].options.empty());
    EXPECT_EQ(m.entries[2].line_number, 4u);
}

TEST(BatchManifest, WithoutHeaderTheFirstLineIsIndexZero) {
    const Manifest m = parse_manifest("x\tone\ny\ttwo\n", "m.tsv");
    ASSERT_EQ(m.entries.size(), 2u);
    EXPECT_EQ(m.entries[0].name, "one");
    EXPECT_EQ(m.entries[0].line_number, 1u);
    EXPECT_TRUE(parse_manifest("# only a header\n", "m.tsv").entries.empty());
    EXPECT_TRUE(parse_manifest("", "m.tsv").entries.empty());
}

TEST(BatchManifest, EachHostileLineIsOneErrorNamingItsLine) {
    const std::map<std::string, std::string> cases = {
        {"a\tok\n\nb\tother\n", "line 2: empty line"},
        {"a\tok\n#late comment\n", "line 2: a '#' line after the first"},
        {"just-a-dir\n", "line 1: 1 tab-separated column"},
        {"a\tb\tc\td\n", "line 1: 4 tab-separated columns"},
        {"\tname\n", "line 1: empty source dir"},
        {"a\t\n", "line 1: empty output name"},
        {"a\t../escape\n", "line 1: output name '../escape' has the byte '/'"},
        {"a\t..\n", "line 1: output name '..' starts with '.'"},
        {"a\tx y\n", "has the byte ' '"},
        {"a\tdup\nb\tdup\n", "line 2: output name 'dup' is also on line 1"},
        {std::string("a\tn\0ul\n", 7), "line 1: a NUL byte"},
        {"a\t" + std::string(201, 'n') + "\n", "line 1: output name of 201 bytes"},
        {"a\tbell\x07\n", "has the byte '\\x07'"},
    };
    for (const auto& [text, expected] : cases) {
        const std::string message = error_of(text);
        EXPECT_NE(message.find("zoo/models.tsv"), std::string::npos) << message;
        EXPECT_NE(message.find(expected), std::string::npos)
            << "input " << text << " gave: " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST(BatchManifest, OversizeAndMissingFilesAreRefusedBeforeReading) {
    EXPECT_NE(error_of(std::string(kMaxManifestBytes + 1, 'a')).find("manifest of 16777217 bytes"),
              std::string::npos);
    try {
        read_manifest("/nonexistent/models.tsv");
        FAIL() << "a missing manifest was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/models.tsv: cannot open"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(read_manifest("/"), Error);  // a folder, not a file
}

std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
    const auto it = g_env.find(name);
    return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST(BatchIndex, FlagThenJobCompletionIndexThenSlurm) {
    g_env = {{"JOB_COMPLETION_INDEX", "5"}, {"SLURM_ARRAY_TASK_ID", "7"}};
    EXPECT_EQ(resolve_batch_index(std::string("3"), fake_env).value, 3u);
    EXPECT_EQ(resolve_batch_index(std::nullopt, fake_env).value, 5u);
    EXPECT_EQ(resolve_batch_index(std::nullopt, fake_env).source, "JOB_COMPLETION_INDEX");
    g_env = {{"JOB_COMPLETION_INDEX", ""}, {"SLURM_ARRAY_TASK_ID", "7"}};
    EXPECT_EQ(resolve_batch_index(std::nullopt, fake_env).value, 7u);
    EXPECT_EQ(resolve_batch_index(std::nullopt, fake_env).source, "SLURM_ARRAY_TASK_ID");
    g_env = {};
    EXPECT_THROW(resolve_batch_index(std::nullopt, fake_env), Error);
}

TEST(BatchIndex, MalformedValuesAreErrorsNotFallbacks) {
    g_env = {{"SLURM_ARRAY_TASK_ID", "0"}};
    for (const std::string bad : {"-1", "+1", " 1", "1x", "0x1", "99999999999999999999", "1.0"}) {
        g_env["JOB_COMPLETION_INDEX"] = bad;
        try {
            resolve_batch_index(std::nullopt, fake_env);
            ADD_FAILURE() << "accepted JOB_COMPLETION_INDEX=" << bad;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("JOB_COMPLETION_INDEX"), std::string::npos)
                << e.what();
        }
        EXPECT_THROW(resolve_batch_index(bad, fake_env), Error) << bad;
    }
}

}  // namespace
}  // namespace rebox::fleet
