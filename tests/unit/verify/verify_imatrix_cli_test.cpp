// `rebox verify --imatrix FILE` on files `rebox quantize --imatrix FILE` wrote (a qwen3 MoE BF16
// fixture, Q4_K_M with a GGUF imatrix: per-expert slices, one expert with a zero count, and the
// fallback types of 64-wide rows; a llama F32 fixture, Q4_0 with a legacy imatrix.dat: the
// whole-row weighting and the permuted q/k rows). Hand-made imatrix files (imatrix_bytes.hpp) with
// an entry for every quantized weight, a token_embd entry of the wrong size (llama-quantize ignores
// it) and an entry for a tensor the model does not have. The file passes with the imatrix, fails
// without it (exit 3: llama.cpp's quantizer weighs by it), fails with a flipped byte in a block
// every sample holds, and a missing or hostile imatrix is one line, exit 1. rebox quantize's bytes
// with an imatrix are llama-quantize's (tests/clients/test_quantize_llama.sh); verify's quantizer
// with an imatrix is ggml's (ref_quantize_oracle_test).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"
#include "verify/imatrix_bytes.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string imatrix_cli() { return test::quoted(test::rebox_cli()); }

struct WeightShape {
    std::string name;
    uint64_t ne0 = 0, experts = 1;
};

// The weights an imatrix covers: every 2-D or 3-D float tensor but the embedding.
std::vector<WeightShape> imatrix_weights(const fs::path& exact) {
    const test::RunResult inspect =
        test::run(imatrix_cli() + " inspect --json " + test::quoted(exact));
    EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
    std::vector<WeightShape> weights;
    const json info = json::parse(inspect.output);  // kept alive for the loop
    for (const json& t : info["tensors"]) {
        const std::string name = t["name"];
        if (t["ne"].size() < 2 || name == "token_embd.weight") continue;
        weights.push_back({name, t["ne"][0].get<uint64_t>(),
                           t["ne"].size() > 2 ? t["ne"][2].get<uint64_t>() : 1});
    }
    return weights;
}

std::vector<float> positive_values(std::mt19937& rng, uint64_t count) {
    std::uniform_real_distribution<float> dist(0.01f, 20.f);
    std::vector<float> values(count);
    for (float& v : values) v = dist(rng);
    if (count > 3) values[1] = 0.f;  // an unused column
    return values;
}

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
}

// GGUF imatrix: sums = weight * count per expert slice; the last expert of a 3-D weight saw no
// token (count 0: llama-quantize weighs it 1 everywhere).
void write_gguf_imatrix(const fs::path& path, const std::vector<WeightShape>& weights) {
    std::mt19937 rng(7);
    std::vector<test_imatrix::GgufImatrixTensor> tensors;
    const auto add = [&](const std::string& name, uint64_t ne0, uint64_t experts) {
        std::vector<float> counts(experts, 3.f);
        if (experts > 1) counts.back() = 0.f;
        tensors.push_back({name + ".in_sum2",
                           {static_cast<int64_t>(ne0), static_cast<int64_t>(experts)},
                           positive_values(rng, ne0 * experts)});
        tensors.push_back({name + ".counts", {1, static_cast<int64_t>(experts)}, counts});
    };
    for (const WeightShape& w : weights) add(w.name, w.ne0, w.experts);
    add("token_embd.weight", 100, 1);     // the wrong size: ignored
    add("blk.99.attn_q.weight", 256, 1);  // no such tensor
    write_bytes(path, test_imatrix::gguf_imatrix(tensors));
}

void write_legacy_imatrix(const fs::path& path, const std::vector<WeightShape>& weights) {
    std::mt19937 rng(11);
    std::vector<test_imatrix::LegacyEntry> entries;
    for (const WeightShape& w : weights)
        entries.push_back({w.name, 5, positive_values(rng, w.ne0 * w.experts)});
    entries.push_back({"token_embd.weight", 5, positive_values(rng, 100)});
    entries.push_back({"blk.99.attn_q.weight", 5, positive_values(rng, 256)});
    write_bytes(path, test_imatrix::legacy_imatrix(entries));
}

// The file offset of a tensor's data, from `rebox inspect --json`.
uint64_t data_offset_of(const fs::path& gguf, const std::string& name) {
    const test::RunResult inspect =
        test::run(imatrix_cli() + " inspect --json " + test::quoted(gguf));
    const json info = json::parse(inspect.output);
    for (const json& t : info["tensors"])
        if (t["name"] == name)
            return info["data_offset"].get<uint64_t>() + t["offset"].get<uint64_t>();
    ADD_FAILURE() << name << " not in " << gguf;
    return 0;
}

void flip_one_byte(const fs::path& file, uint64_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char byte = 0;
    f.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x21);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(&byte, 1);
}

struct ImatrixCase {
    const char* name;
    const char* fixture;  // rebox-mkfixture arguments
    const char* type;
    bool legacy;
};

class VerifyImatrix : public ::testing::TestWithParam<ImatrixCase> {};

TEST_P(VerifyImatrix, PassesWithTheImatrixAndFailsWithoutOrWhenChanged) {
    const ImatrixCase& c = GetParam();
    test::ScratchDir scratch;
    const fs::path model = scratch.path() / "model";
    const fs::path exact = scratch.path() / "exact.gguf", quant = scratch.path() / "q.gguf";
    const fs::path imatrix = scratch.path() / (c.legacy ? "imatrix.dat" : "imatrix.gguf");
    ASSERT_EQ(test::run_mkfixture(model, c.fixture), 0);
    const test::RunResult convert = test::run(imatrix_cli() + " convert " + test::quoted(model) +
                                              " -o " + test::quoted(exact) + " -q");
    ASSERT_EQ(convert.exit_code, 0) << convert.output;
    const std::vector<WeightShape> weights = imatrix_weights(exact);
    ASSERT_GE(weights.size(), 10u);
    if (c.legacy)
        write_legacy_imatrix(imatrix, weights);
    else
        write_gguf_imatrix(imatrix, weights);
    const test::RunResult quantize =
        test::run(imatrix_cli() + " quantize " + test::quoted(exact) + " " + test::quoted(quant) +
                  " " + c.type + " --imatrix " + test::quoted(imatrix));
    ASSERT_EQ(quantize.exit_code, 0) << quantize.output;

    const std::string verify =
        imatrix_cli() + " verify " + test::quoted(model) + " " + test::quoted(quant);
    const std::string with_imatrix = verify + " --imatrix " + test::quoted(imatrix);
    const fs::path report_path = scratch.path() / "report.json";
    const test::RunResult good = test::run(with_imatrix + " --json " + test::quoted(report_path));
    ASSERT_EQ(good.exit_code, 0) << good.output;
    EXPECT_EQ(good.output.find("PROBLEM"), std::string::npos) << good.output;
    json report;
    std::ifstream(report_path) >> report;
    const uint64_t requantized = report["requantized_total"].get<uint64_t>();
    EXPECT_GE(requantized, weights.size() - 4) << good.output;  // router weights stay F32
    EXPECT_EQ(report["requantized_identical"].get<uint64_t>(), requantized);
    const test::RunResult full = test::run(with_imatrix + " --full -t 2");
    EXPECT_EQ(full.exit_code, 0) << full.output;

    // Without the imatrix llama.cpp's quantizer writes other blocks: verify says so.
    const test::RunResult without = test::run(verify);
    EXPECT_EQ(without.exit_code, 3) << without.output;
    EXPECT_NE(without.output.find("PROBLEM blk.0.attn_q.weight"), std::string::npos)
        << without.output;
    EXPECT_NE(without.output.find("differ from llama.cpp's quantizer"), std::string::npos);

    // Block 0 of a tensor is in every sample: one flipped byte there fails with the imatrix too.
    flip_one_byte(quant, data_offset_of(quant, "blk.0.attn_q.weight") + 2);
    const test::RunResult flipped = test::run(with_imatrix);
    EXPECT_EQ(flipped.exit_code, 3) << flipped.output;
    EXPECT_NE(flipped.output.find("PROBLEM blk.0.attn_q.weight"), std::string::npos)
        << flipped.output;
    EXPECT_NE(flipped.output.find("first block 0 at byte 2"), std::string::npos) << flipped.output;
    EXPECT_EQ(flipped.output.find("PROBLEM blk.0.attn_k.weight"), std::string::npos);

    // An imatrix verify cannot read: one line naming it, exit 1.
    const test::RunResult missing =
        test::run(verify + " --imatrix " + test::quoted(scratch.path() / "absent.dat"));
    EXPECT_EQ(missing.exit_code, 1) << missing.output;
    EXPECT_NE(missing.output.find("absent.dat"), std::string::npos) << missing.output;
    const fs::path cut = scratch.path() / "cut.dat";
    write_bytes(cut, test_imatrix::legacy_imatrix({{"blk.0.attn_q.weight", 1, {1.f, 2.f}}}));
    fs::resize_file(cut, 4 + 4 + 19 + 4 + 4 + 4);
    const test::RunResult hostile = test::run(verify + " --imatrix " + test::quoted(cut));
    EXPECT_EQ(hostile.exit_code, 1) << hostile.output;
    EXPECT_NE(hostile.output.find("cut.dat: entry 1 (blk.0.attn_q.weight) values: needs 8 bytes"),
              std::string::npos)
        << hostile.output;
}

INSTANTIATE_TEST_SUITE_P(
    Imatrix, VerifyImatrix,
    ::testing::Values(ImatrixCase{"qwen3_moe_bf16_q4_k_m_gguf_imatrix",
                                  "--preset tiny --format float --hidden 256 --arch qwen3_moe",
                                  "Q4_K_M", false},
                      ImatrixCase{"llama_f32_q4_0_legacy_imatrix",
                                  "--preset tiny --format float --dtype f32 --hidden 256 "
                                  "--arch llama",
                                  "Q4_0", true}),
    [](const ::testing::TestParamInfo<ImatrixCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace rebox
