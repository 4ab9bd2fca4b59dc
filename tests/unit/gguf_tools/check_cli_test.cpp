// `rebox check` exit codes and lines on files whose problems follow from the GGUF spec and
// llama.cpp's loader rules alone (docs/check.md): a converted fixture passes, hand-built files
// with a mistyped or missing key, missing merges or a hostile block_count are findings naming the
// key, a truncated file is unreadable, a *.json beside the file is an Ollama warning.
// (test_check.sh confirms each rule against llama.cpp.)
#include <fstream>
#include <nlohmann/json.hpp>

#include "format/gguf_test_bytes.hpp"
#include "gguf_tools/tool_fixture.hpp"
#include "test_files.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::quoted;

class CheckCli : public test::GgufToolTest {};

TEST_F(CheckCli, AConvertedFixturePassesForBothTargets) {
    const auto gguf = converted("tiny.gguf");
    for (const char* target : {"llama.cpp", "ollama"}) {
        const auto r = rebox("check " + quoted(gguf) + " --for " + target);
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_TRUE(contains(r.out, "OK: 1 file(s)")) << r.out;
        EXPECT_FALSE(contains(r.out, "FINDING")) << r.out;
    }
}

TEST_F(CheckCli, AJsonSidecarIsAnOllamaWarningOnly) {
    const auto gguf = converted("tiny.gguf");
    test::write_file(dir_ / "report.json", std::string_view("{}"));
    const auto ollama = rebox("check " + quoted(gguf) + " --for ollama");
    EXPECT_EQ(ollama.exit_code, 0) << ollama.output;
    EXPECT_TRUE(contains(ollama.out, "WARNING: ")) << ollama.out;
    EXPECT_TRUE(contains(ollama.out, "report.json lies beside the GGUF")) << ollama.out;
    EXPECT_TRUE(contains(ollama.out, "FROM ./tiny.gguf")) << ollama.out;
    const auto llama = rebox("check " + quoted(gguf));
    EXPECT_FALSE(contains(llama.out, "report.json")) << llama.out;
}

TEST_F(CheckCli, MistypedAndMissingKeysAreFindingsNamingTheKey) {
    // qwen3.block_count as INT32 (type 5), tokenizer.ggml.model "gpt2" without merges or tokens,
    // no context_length / embedding_length.
    test::GgufBytes b;
    b.header(0, 3).kv_str("general.architecture", "qwen3");
    b.str("qwen3.block_count").u32(5).i32(2);
    b.kv_str("tokenizer.ggml.model", "gpt2");
    test::write_file(dir_ / "bad.gguf", b.v);
    const auto r = rebox("check " + quoted(dir_ / "bad.gguf"));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    for (const char* line :
         {"FINDING: " /* file */, "qwen3.block_count has type INT32",
          "qwen3.context_length is missing", "qwen3.embedding_length is missing",
          "tokenizer.ggml.tokens is missing", "tokenizer.ggml.merges is missing"})
        EXPECT_TRUE(contains(r.out, line)) << line << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "FAILED:")) << r.out;

    const auto json = rebox("check " + quoted(dir_ / "bad.gguf") + " --json");
    EXPECT_EQ(json.exit_code, 1) << json.output;
    const auto parsed = nlohmann::json::parse(json.out);
    EXPECT_EQ(parsed["status"], "findings");
    EXPECT_EQ(parsed["findings"][0]["subject"], "qwen3.block_count") << json.out;
}

TEST_F(CheckCli, AModelCardKeyOfAnotherTypeThanTheConverterWritesIsAWarningOnly) {
    // gguf-py writes general.sampling.top_k as INT32 and general.base_model.N.name as STRING;
    // llama.cpp reads the first as text and never the second, so neither fails the file.
    test::GgufBytes b;
    b.header(0, 3).kv_str("general.architecture", "qwen3");
    b.kv_u32("general.sampling.top_k", 20);
    b.kv_u32("general.base_model.0.name", 7);
    test::write_file(dir_ / "card.gguf", b.v);
    const auto r = rebox("check " + quoted(dir_ / "card.gguf"));
    for (const char* line :
         {"WARNING: ",
          "general.sampling.top_k has type UINT32; llama.cpp's converter writes it as "
          "INT32",
          "general.base_model.0.name has type UINT32; llama.cpp's converter writes it as STRING"})
        EXPECT_TRUE(contains(r.out, line)) << line << "\n" << r.out;
    EXPECT_FALSE(contains(r.out, "FINDING: general.")) << r.out;
}

TEST_F(CheckCli, AHostileBlockCountIsAFindingNotAWalkOverBillionsOfLayers) {
    test::GgufBytes b;
    b.header(0, 4).kv_str("general.architecture", "qwen3");
    b.kv_u32("qwen3.block_count", 4294967295u).kv_u32("qwen3.embedding_length", 64);
    b.kv_u32("qwen3.context_length", 128);
    test::write_file(dir_ / "huge.gguf", b.v);
    const auto r = rebox("check " + quoted(dir_ / "huge.gguf"));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.out, "qwen3.block_count is 4294967295; llama.cpp asserts at most 512"))
        << r.out;
}

// gemma4's two layer kinds read back from the KVs as llama.cpp's gemma4 loader reads them: the
// BOOL sliding_window_pattern gives each layer's kind, key_length is the full layers' head size and
// key_length_swa the sliding layers', the INT32 head_count_kv array each kind's kv heads. Layer 0
// sliding (2 heads of 4, 2 kv heads), layer 1 full (2 heads of 8, 1 kv head).
std::vector<uint8_t> gemma4_file(int64_t full_q_rows) {
    test::GgufBytes b;
    b.header(4, 8).kv_str("general.architecture", "gemma4");
    b.kv_u32("gemma4.block_count", 2).kv_u32("gemma4.embedding_length", 8);
    b.kv_u32("gemma4.attention.head_count", 2).kv_u32("gemma4.attention.key_length", 8);
    b.kv_u32("gemma4.attention.key_length_swa", 4);
    b.str("gemma4.attention.head_count_kv").u32(9).u32(5).u64(2).i32(2).i32(1);
    b.str("gemma4.attention.sliding_window_pattern").u32(9).u32(7).u64(2).u8(1).u8(0);
    const std::pair<const char*, std::vector<int64_t>> tensors[] = {
        {"blk.0.attn_q.weight", {8, 8}},            // 2 * 4
        {"blk.0.attn_k.weight", {8, 8}},            // 2 * 4
        {"blk.1.attn_q.weight", {8, full_q_rows}},  // 2 * 8
        {"blk.1.attn_k.weight", {8, 8}}};           // 1 * 8
    uint64_t offset = 0;
    for (const auto& [name, ne] : tensors) {
        b.tensor(name, ne, 0, offset);
        offset += 4 * ne[0] * ne[1];
    }
    b.pad();
    b.fill(offset, 0);
    return b.v;
}

TEST_F(CheckCli, Gemma4LayersOfTwoShapesAreCheckedPerKind) {
    test::write_file(dir_ / "g4.gguf", gemma4_file(16));
    const auto good = rebox("check " + quoted(dir_ / "g4.gguf"));
    EXPECT_FALSE(contains(good.out, "wrong shape")) << good.out;
    test::write_file(dir_ / "g4_bad.gguf", gemma4_file(8));
    const auto bad = rebox("check " + quoted(dir_ / "g4_bad.gguf"));
    EXPECT_EQ(bad.exit_code, 1) << bad.output;
    EXPECT_TRUE(contains(bad.out, "blk.1.attn_q.weight has ne")) << bad.out;
    EXPECT_EQ(bad.out.find("blk.0.attn_q.weight has ne"), std::string::npos) << bad.out;
}

TEST_F(CheckCli, ATruncatedFileIsUnreadable) {
    const auto gguf = converted("tiny.gguf");
    const auto size = fs::file_size(gguf);
    fs::resize_file(gguf, size - 100);
    const auto r = rebox("check " + quoted(gguf));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.err, "unreadable")) << r.err;
    EXPECT_TRUE(contains(r.err, "tiny.gguf")) << r.err;
}

}  // namespace
}  // namespace rebox
