// `rebox inspect` as a user runs it: the built binary on files written here (hand-assembled bytes
// from docs/gguf.md, offsets worked out by hand), checking exit codes, key text lines, the --json
// schema, and the one-line "rebox: FILE: ..." error for a corrupt file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "format/gguf_test_bytes.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

using CliResult = test::RunResult;

class InspectCli : public ::testing::Test {
  protected:
    fs::path write(const std::string& name, const std::vector<uint8_t>& bytes) {
        const fs::path path = dir_ / name;
        test::write_file(path, bytes);
        return path;
    }

    CliResult run(const std::string& args) {
        return test::run(test::quoted(test::rebox_cli()) + " inspect " + args);
    }

    test::ScratchDir scratch_;
    fs::path dir_ = scratch_.path();
};

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST_F(InspectCli, TextShowsHeaderKvsTensorsAndTotals) {
    const fs::path path = write("small.gguf", test::small_file());
    const CliResult r = run("'" + path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    for (const char* line :
         {"  version       3\n", "  tensor_count  2\n", "  kv_count      3\n",
          "  alignment     32\n", "  data_offset   256\n", "  file_size     448\n",
          "      1: STRING     | general.architecture = 'qwen3'\n",
          "      2: UINT32     | qwen3.block_count = 28\n",
          "      3: ARRAY      | tokenizer.ggml.tokens = [STRING] x2: 'a', 'bc'\n",
          "* 2 tensor(s)\n", "  F32      count      1  bytes             20\n",
          "  Q4_1     count      1  bytes            160\n",
          "  all      count      2  bytes            180\n"})
        EXPECT_TRUE(contains(r.out, line)) << "missing: " << line << "\nin:\n" << r.out;
    // Tensor rows: index, name, ne in ggml order, type, offset, bytes.
    EXPECT_TRUE(contains(r.out, "      0  t.q41  64, 4  Q4_1                0           160\n"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "      1  t.f32  5      F32               160            20\n"))
        << r.out;
}

TEST_F(InspectCli, HeaderExplainsTheFirst24Bytes) {
    const fs::path path = write("small.gguf", test::small_file());
    const CliResult r = run("--header '" + path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "  00000000  47 47 55 46              magic         'GGUF'\n"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "  00000004  03 00 00 00              version       3\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "  00000008  02 00 00 00 00 00 00 00  tensor_count  2\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "  00000010  03 00 00 00 00 00 00 00  kv_count      3\n")) << r.out;
}

TEST_F(InspectCli, JsonFollowsTheSchema) {
    const fs::path path = write("small.gguf", test::small_file());
    const CliResult r = run("--json '" + path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["format"], "gguf");
    EXPECT_EQ(j["file"], path.string());
    EXPECT_EQ(j["version"], 3);
    EXPECT_EQ(j["alignment"], 32);
    EXPECT_EQ(j["data_offset"], 256);
    EXPECT_EQ(j["file_size"], 448);
    EXPECT_EQ(j["kv_count"], 3);
    EXPECT_EQ(j["tensor_count"], 2);
    ASSERT_EQ(j["kv"].size(), 3u);
    EXPECT_EQ(j["kv"][0], nlohmann::json::parse(
                              R"({"key":"general.architecture","type":"STRING","value":"qwen3"})"));
    EXPECT_EQ(j["kv"][1],
              nlohmann::json::parse(R"({"key":"qwen3.block_count","type":"UINT32","value":28})"));
    EXPECT_EQ(j["kv"][2], nlohmann::json::parse(R"({"key":"tokenizer.ggml.tokens","type":"ARRAY",
        "elem_type":"STRING","length":2,"value":["a","bc"]})"));
    EXPECT_EQ(j["tensors"], nlohmann::json::parse(R"([
        {"name":"t.q41","type":"Q4_1","type_id":3,"ne":[64,4],"offset":0,"nbytes":160},
        {"name":"t.f32","type":"F32","type_id":0,"ne":[5],"offset":160,"nbytes":20}])"));
    EXPECT_EQ(j["totals"], nlohmann::json::parse(
                               R"({"F32":{"count":1,"bytes":20},"Q4_1":{"count":1,"bytes":160}})"));
    EXPECT_EQ(j.size(), 11u);  // no fields beyond the schema
}

TEST_F(InspectCli, JsonScalarsFloatsBoolsAndInvalidUtf8) {
    test::GgufBytes b;
    b.header(0, 5);
    b.str("f").u32(6).put(0.1f);
    b.str("b").u32(7).u8(1);
    b.str("s").u32(8).str(
        std::string("\xff"
                    "ok",
                    3));
    b.str("u64").u32(10).u64(~0ull);
    b.str("i8").u32(1).put(int8_t{-5});
    const fs::path path = write("scalars.gguf", b.v);
    const CliResult r = run("--json '" + path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["kv"][0]["type"], "FLOAT32");
    EXPECT_EQ(j["kv"][0]["value"].get<double>(), static_cast<double>(0.1f));
    EXPECT_EQ(j["kv"][1]["value"], true);
    EXPECT_EQ(j["kv"][2]["value"], "\xEF\xBF\xBDok");  // U+FFFD replaces the invalid byte
    EXPECT_EQ(j["kv"][3]["value"].get<uint64_t>(), ~0ull);
    EXPECT_EQ(j["kv"][4]["value"], -5);
    EXPECT_EQ(j["tensor_count"], 0);
    EXPECT_TRUE(j["tensors"].empty());
    EXPECT_TRUE(j["totals"].is_object() && j["totals"].empty());
}

TEST_F(InspectCli, CorruptFileGivesExit1AndOneLineNamingTheFile) {
    std::vector<uint8_t> bytes = test::small_file();
    bytes.resize(435);  // cuts t.f32 (bytes 416..435 of 448)
    const fs::path path = write("cut.gguf", bytes);
    for (const std::string flags : {"", "--json ", "--header "}) {
        const CliResult r = run(flags + "'" + path.string() + "'");
        EXPECT_EQ(r.exit_code, 1) << flags;
        EXPECT_EQ(r.err.rfind("rebox: " + path.string() + ": tensor 't.f32': data (20 bytes", 0),
                  0u)
            << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        if (flags == "--json ") EXPECT_EQ(r.out, "");
    }
    bytes = test::small_file();
    bytes[0] = 'F';
    const fs::path bad_magic = write("bad.gguf", bytes);
    const CliResult r = run("'" + bad_magic.string() + "'");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "rebox: " + bad_magic.string() +
                         ": magic: not a GGUF file (starts with 'FGUF') (expected 'GGUF')\n");
    const CliResult header = run("--header '" + bad_magic.string() + "'");
    EXPECT_EQ(header.exit_code, 1);
    EXPECT_EQ(header.out, "");  // nothing printed for a file that is not GGUF
    EXPECT_EQ(header.err, r.err);
    const CliResult missing = run("'" + (dir_ / "missing.gguf").string() + "'");
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_EQ(missing.err.rfind("rebox: " + (dir_ / "missing.gguf").string() + ": cannot open", 0),
              0u)
        << missing.err;
}

// 8-byte little-endian header length, the JSON header, then the data area (safetensors layout).
std::vector<uint8_t> safetensors_file(const std::string& header, size_t data_size) {
    test::GgufBytes b;
    b.u64(header.size()).raw(header).fill(data_size, 0);
    return b.v;
}

const char* kStHeader =
    R"({"__metadata__":{"format":"pt","mcq":"{\"version\":1,\"bits\":[4]}"},)"
    R"("model.embed.weight":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]},)"
    R"("b":{"dtype":"I32","shape":[2],"data_offsets":[12,20]}})";

TEST_F(InspectCli, SafetensorsJsonFollowsTheSchema) {
    const fs::path path = write("m.safetensors", safetensors_file(kStHeader, 20));
    const CliResult r = run("--json '" + path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["format"], "safetensors");
    EXPECT_EQ(j["file"], path.string());
    EXPECT_EQ(j["header_size"], std::string(kStHeader).size());
    EXPECT_EQ(j["metadata"],
              nlohmann::json::parse(R"({"format":"pt","mcq":{"version":1,"bits":[4]}})"));
    EXPECT_EQ(j["tensors"], nlohmann::json::parse(R"([
        {"name":"model.embed.weight","dtype":"F16","shape":[2,3],"begin":0,"end":12},
        {"name":"b","dtype":"I32","shape":[2],"begin":12,"end":20}])"));
    EXPECT_EQ(j.size(), 5u);
}

TEST_F(InspectCli, SafetensorsTextPrettyPrintsMcqAndKeepsOtherStrings) {
    const std::string header = R"({"__metadata__":{"mcq":"{\"version\":1}","note":"{not json"},)"
                               R"("w":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})";
    const fs::path path = write("m.safetensors", safetensors_file(header, 8));
    const CliResult r = run("'" + path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "  header_size   " + std::to_string(header.size()) + "\n"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "  mcq =\n  {\n    \"version\": 1\n  }\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "  note = {not json\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "      0  w     BF16     [4]               0             8\n"))
        << r.out;

    const CliResult j = run("--json '" + path.string() + "'");
    ASSERT_EQ(j.exit_code, 0) << j.err;
    EXPECT_EQ(nlohmann::json::parse(j.out)["metadata"]["note"], "{not json");
}

TEST_F(InspectCli, CorruptSafetensorsGivesExit1NamingTheFile) {
    const fs::path path = write("bad.safetensors", safetensors_file(kStHeader, 19));
    const CliResult r = run("'" + path.string() + "'");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err.rfind("rebox: " + path.string() + ": ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace rebox
