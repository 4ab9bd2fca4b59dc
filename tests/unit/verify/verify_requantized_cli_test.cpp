// `rebox verify MODEL_DIR q.gguf` on files `rebox quantize` wrote from an exact float conversion
// (qwen3 BF16 and llama F32 fixtures; Q4_K_M, Q8_0, Q6_K): every lossy tensor is reported as
// re-quantized (never bit-identical) with its blocks and errors, the summary counts them, and
// verify's KV rules accept what quantize adds (general.file_type of a K recipe is unchecked). A
// byte flipped in a block the sample always holds (a tensor's first block) fails verify, exit 3,
// naming the tensor; a byte flipped in a block outside the sample passes the sampled check and
// fails under --full. rebox quantize's bytes are llama-quantize's (tests/clients/
// test_quantize_llama.sh); here the check is that verify's own re-quantizer agrees and catches
// changes.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string cli() { return test::quoted(test::rebox_cli()); }

// A tensor's data offset in the file, its type and ne, from `rebox inspect --json`.
struct TensorPlace {
    uint64_t file_offset = 0;
    std::string type;
    uint64_t row_values = 0, rows = 0;
};

TensorPlace find_tensor(const fs::path& gguf, const std::string& name) {
    const test::RunResult inspect = test::run(cli() + " inspect --json " + test::quoted(gguf));
    EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
    const json info = json::parse(inspect.output);
    for (const json& t : info["tensors"])
        if (t["name"] == name)
            return {info["data_offset"].get<uint64_t>() + t["offset"].get<uint64_t>(), t["type"],
                    t["ne"][0].get<uint64_t>(), t["ne"][1].get<uint64_t>()};
    ADD_FAILURE() << name << " not in " << gguf;
    return {};
}

// Block values and bytes of the types these recipes give token_embd (ggml's block structs).
std::pair<uint64_t, uint64_t> block_layout(const std::string& type) {
    if (type == "Q8_0") return {32, 34};
    if (type == "Q4_K") return {256, 144};
    if (type == "Q6_K") return {256, 210};
    ADD_FAILURE() << "unexpected type " << type;
    return {32, 34};
}

void flip_byte(const fs::path& file, uint64_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char byte = 0;
    f.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x5a);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(&byte, 1);
}

struct Case {
    const char* name;
    const char* fixture;  // rebox-mkfixture arguments
    const char* type;
};

class VerifyRequantized : public ::testing::TestWithParam<Case> {};

TEST_P(VerifyRequantized, ReportsRequantizedTensorsAndCatchesAFlippedByte) {
    const Case& c = GetParam();
    test::ScratchDir scratch;
    const fs::path model = scratch.path() / "model";
    const fs::path exact = scratch.path() / "exact.gguf", quant = scratch.path() / "q.gguf";
    ASSERT_EQ(test::run_mkfixture(model, c.fixture), 0);
    const test::RunResult convert =
        test::run(cli() + " convert " + test::quoted(model) + " -o " + test::quoted(exact) + " -q");
    ASSERT_EQ(convert.exit_code, 0) << convert.output;
    const test::RunResult quantize = test::run(cli() + " quantize " + test::quoted(exact) + " " +
                                               test::quoted(quant) + " " + c.type);
    ASSERT_EQ(quantize.exit_code, 0) << quantize.output;
    const std::string verify = cli() + " verify " + test::quoted(model) + " " + test::quoted(quant);

    const fs::path report_path = scratch.path() / "report.json";
    const test::RunResult good = test::run(verify + " --json " + test::quoted(report_path));
    ASSERT_EQ(good.exit_code, 0) << good.output;
    EXPECT_EQ(good.output.find("PROBLEM"), std::string::npos) << good.output;
    // A K recipe's file type is not named by its tensor types; a Q8_0 file's still is (checked).
    EXPECT_EQ(good.output.find("UNCHECKED general.file_type") != std::string::npos,
              std::string(c.type) != "Q8_0")
        << good.output;
    json report;
    std::ifstream(report_path) >> report;
    // Every 2-D weight of these fixtures is quantized by each recipe; norms stay F32 (copied).
    const uint64_t requantized = report["requantized_total"].get<uint64_t>();
    EXPECT_GE(requantized, 15u) << good.output;
    EXPECT_EQ(report["requantized_identical"].get<uint64_t>(), requantized);
    const std::string counts = std::to_string(requantized) + "/" + std::to_string(requantized);
    EXPECT_NE(good.output.find("re-quantized tensors identical to the reference quantizer: " +
                               counts + " (sampled)"),
              std::string::npos)
        << good.output;
    EXPECT_GT(report["copied_total"].get<uint64_t>(), 0u);  // the norms
    EXPECT_EQ(report["copied_identical"], report["copied_total"]);
    size_t lines = 0;
    for (const json& t : report["tensors"]) {
        if (!t.value("requantized", false)) continue;
        SCOPED_TRACE(t["gguf_name"].get<std::string>());
        EXPECT_TRUE(t["identical"].get<bool>());
        EXPECT_GT(t["blocks_checked"].get<uint64_t>(), 0u);
        EXPECT_LE(t["blocks_checked"].get<uint64_t>(), t["blocks_total"].get<uint64_t>());
        EXPECT_GT(t["rmse"].get<double>(), 0.0);  // lossy: never exact on random values
        EXPECT_GE(t["max_abs_error"].get<double>(), t["rmse"].get<double>());
        ++lines;
    }
    EXPECT_EQ(lines, requantized);
    const std::regex line(
        "REQUANTIZED blk\\.0\\.attn_q\\.weight [A-Z0-9_]+: \\d+/\\d+ sampled "
        "blocks identical to the reference quantizer, RMSE [0-9.e+-]+, max abs "
        "error [0-9.e+-]+\n");
    EXPECT_TRUE(std::regex_search(good.output, line)) << good.output;
    EXPECT_EQ(good.output.find("bit-identical: " + counts), std::string::npos);

    const test::RunResult full = test::run(verify + " --full");
    ASSERT_EQ(full.exit_code, 0) << full.output;
    EXPECT_NE(full.output.find("re-quantized tensors identical to the reference quantizer: " +
                               counts + " (every block)"),
              std::string::npos)
        << full.output;

    // token_embd.weight is 256 x vocab (459): more than 64 blocks, so a sample. Block 0 is in
    // every sample; the middle block of the middle row is not in this tensor's.
    const TensorPlace embd = find_tensor(quant, "token_embd.weight");
    const auto [block_values, block_bytes] = block_layout(embd.type);
    const uint64_t blocks_per_row = embd.row_values / block_values;
    const uint64_t outside_block = embd.rows / 2 * blocks_per_row + blocks_per_row / 2;
    const std::string all_blocks = std::to_string(embd.rows * blocks_per_row);
    flip_byte(quant, embd.file_offset + outside_block * block_bytes + block_bytes - 3);
    const test::RunResult sampled = test::run(verify);
    EXPECT_EQ(sampled.exit_code, 0) << sampled.output;
    const test::RunResult caught = test::run(verify + " --full");
    EXPECT_EQ(caught.exit_code, 3) << caught.output;
    EXPECT_NE(caught.output.find("PROBLEM token_embd.weight"), std::string::npos) << caught.output;
    EXPECT_NE(caught.output.find(
                  "1 of " + all_blocks + " blocks differ from llama.cpp's quantizer, first block " +
                  std::to_string(outside_block) + " at byte " + std::to_string(block_bytes - 3)),
              std::string::npos)
        << caught.output;

    flip_byte(quant, embd.file_offset + block_bytes - 3);  // block 0
    const test::RunResult bad = test::run(verify);
    EXPECT_EQ(bad.exit_code, 3) << bad.output;
    EXPECT_NE(bad.output.find("PROBLEM token_embd.weight"), std::string::npos) << bad.output;
    EXPECT_NE(bad.output.find("sampled blocks differ from llama.cpp's quantizer, first block 0 "
                              "at byte " +
                              std::to_string(block_bytes - 3)),
              std::string::npos)
        << bad.output;
}

INSTANTIATE_TEST_SUITE_P(
    Recipes, VerifyRequantized,
    ::testing::Values(
        Case{"qwen3_bf16_q4_k_m", "--preset tiny --format float --hidden 256", "Q4_K_M"},
        Case{"qwen3_bf16_q8_0", "--preset tiny --format float --hidden 256", "Q8_0"},
        Case{"llama_f32_q6_k", "--preset tiny --format float --dtype f32 --hidden 256 --arch llama",
             "Q6_K"},
        Case{"llama_f32_q4_k_m",
             "--preset tiny --format float --dtype f32 --hidden 256 --arch llama", "Q4_K_M"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace rebox
