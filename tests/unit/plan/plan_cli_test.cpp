// `rebox plan` and the new conversion paths as a user runs them, on rebox-mkfixture directories
// (tiny preset, small tokenizer): exit codes (0 plannable, 2 BLOCKERs), the table and --json, the
// planned file size against the size of the file convert really writes, the bits5 fixture (layer 0
// q_proj at 5 bits, group 64) converting to Q5_1 that `rebox verify` proves bit-identical, and the
// group16 fixture refused by default but converted exactly with --allow-lossless-fallback.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using RunResult = test::RunResult;
using test::quoted;
using test::read_file;

class PlanCli : public ::testing::Test {
  protected:
    test::ScratchDir scratch_;
    fs::path work_ = scratch_.path();

    RunResult rebox(const std::string& args) {
        return test::run(quoted(test::rebox_cli()) + " " + args);
    }

    fs::path fixture(const std::string& name, const std::string& extra = "") {
        const fs::path dir = work_ / name;
        const RunResult r = test::run(quoted(test::mkfixture_cli()) + " " + quoted(dir) +
                                      " --preset tiny --tokenizer small " + extra);
        EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
        return dir;
    }

    static const json* tensor(const json& plan, const std::string& gguf_name) {
        for (const json& t : plan["tensors"])
            if (t["gguf_name"] == gguf_name) return &t;
        return nullptr;
    }
};

TEST_F(PlanCli, GoodFixturePlansAndItsSizeIsTheWrittenFileSize) {
    const fs::path model = fixture("good");
    const RunResult text = rebox("plan " + quoted(model));
    ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
    EXPECT_NE(text.out.find("layers.0.self_attn.q_proj.weight"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("blk.0.attn_q.weight"), std::string::npos);
    EXPECT_NE(text.out.find("q4_1_repack"), std::string::npos);
    EXPECT_EQ(text.out.find("BLOCKER"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("x the packed input"), std::string::npos) << text.out;

    const RunResult js = rebox("plan --json " + quoted(model));
    ASSERT_EQ(js.exit_code, 0) << js.err;
    const json plan = json::parse(js.out);
    EXPECT_EQ(plan["plannable"], true);
    EXPECT_TRUE(plan["blockers"].empty());
    const json* q = tensor(plan, "blk.0.attn_q.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ((*q)["source_name"], "layers.0.self_attn.q_proj.weight");
    EXPECT_EQ((*q)["type"], "Q4_1");
    EXPECT_EQ((*q)["bits"], 4);
    EXPECT_EQ((*q)["group"], 64);
    EXPECT_FALSE((*q)["note"].get<std::string>().empty());

    // Nothing was written by plan; convert then writes exactly the planned number of bytes.
    const fs::path gguf = work_ / "good.gguf";
    EXPECT_FALSE(fs::exists(gguf));
    const RunResult convert = rebox("convert " + quoted(model) + " -o " + quoted(gguf) + " -q");
    ASSERT_EQ(convert.exit_code, 0) << convert.err;
    EXPECT_EQ(plan["file_bytes"].get<uint64_t>(), fs::file_size(gguf));
    EXPECT_EQ(plan["source_bytes"].get<uint64_t>(), fs::file_size(model / "model.safetensors"));
    EXPECT_DOUBLE_EQ(
        plan["size_ratio"].get<double>(),
        double(fs::file_size(gguf)) / double(fs::file_size(model / "model.safetensors")));
}

TEST_F(PlanCli, Group16FixtureIsRefusedThenConvertsExactlyWithTheFallback) {
    const fs::path model = fixture("group16", "--defect group16");
    const RunResult text = rebox("plan " + quoted(model));
    EXPECT_EQ(text.exit_code, 2) << text.out << text.err;
    EXPECT_NE(text.out.find("BLOCKER layers.0.self_attn.q_proj.weight: group 16 is not a multiple "
                            "of 32"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("--allow-lossless-fallback"), std::string::npos) << text.out;

    const RunResult js = rebox("plan --json " + quoted(model));
    EXPECT_EQ(js.exit_code, 2);
    const json refused = json::parse(js.out);
    EXPECT_EQ(refused["plannable"], false);
    ASSERT_EQ(refused["blockers"].size(), 1u) << js.out;
    EXPECT_EQ(refused["blockers"][0]["tensor"], "layers.0.self_attn.q_proj.weight");
    EXPECT_FALSE(refused.contains("file_bytes"));

    const fs::path gguf = work_ / "g16.gguf";
    const RunResult no_flag = rebox("convert " + quoted(model) + " -o " + quoted(gguf) + " -q");
    EXPECT_EQ(no_flag.exit_code, 2) << no_flag.err;
    EXPECT_FALSE(fs::exists(gguf));

    const RunResult fallback = rebox("plan --json --allow-lossless-fallback " + quoted(model));
    ASSERT_EQ(fallback.exit_code, 0) << fallback.out << fallback.err;
    const json planned = json::parse(fallback.out);
    const json* q = tensor(planned, "blk.0.attn_q.weight");
    ASSERT_NE(q, nullptr);
    const std::string type = (*q)["type"];
    EXPECT_TRUE(type == "F16" || type == "F32") << type;
    EXPECT_EQ((*q)["encoding"], type == "F16" ? "dequant_f16" : "dequant_f32");
    EXPECT_NE((*q)["note"].get<std::string>().find("group 16"), std::string::npos);
    EXPECT_EQ((*q)["nbytes"], 64 * 64 * (type == "F16" ? 2 : 4));

    const RunResult convert =
        rebox("convert " + quoted(model) + " -o " + quoted(gguf) + " -q --allow-lossless-fallback");
    ASSERT_EQ(convert.exit_code, 0) << convert.err;
    EXPECT_EQ(planned["file_bytes"].get<uint64_t>(), fs::file_size(gguf));
    const RunResult verify = rebox("verify " + quoted(model) + " " + quoted(gguf));
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_F(PlanCli, Bits5FixtureConvertsToQ5_1AndVerifiesBitIdentical) {
    const fs::path model = fixture("bits5", "--defect bits5");
    // --outtype q4_1 keeps the single-type behaviour: the 5-bit tensor is a BLOCKER naming it.
    const RunResult q4_1_only = rebox("plan --outtype q4_1 " + quoted(model));
    EXPECT_EQ(q4_1_only.exit_code, 2) << q4_1_only.out;
    EXPECT_NE(q4_1_only.out.find("BLOCKER layers.0.self_attn.q_proj.weight: bits 5"),
              std::string::npos)
        << q4_1_only.out;
    // The default (--outtype auto) needs no flag for Q5_1.
    const RunResult js = rebox("plan --json " + quoted(model));
    ASSERT_EQ(js.exit_code, 0) << js.out << js.err;
    const json plan = json::parse(js.out);
    const json* q = tensor(plan, "blk.0.attn_q.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ((*q)["type"], "Q5_1");
    EXPECT_EQ((*q)["encoding"], "q5_1_repack");
    EXPECT_EQ((*q)["bits"], 5);
    EXPECT_EQ((*q)["nbytes"], 64 * 64 / 32 * 24);  // [64, 64]: 128 blocks of 24 bytes
    // tiny: 15 quantized tensors (one at 5 bits), 9 norms.
    EXPECT_EQ(plan["type_counts"], json({{"Q4_1", 14}, {"Q5_1", 1}, {"F32", 9}})) << plan.dump();

    const fs::path gguf = work_ / "bits5.gguf";
    const fs::path report = work_ / "verify.json";
    const RunResult convert = rebox("convert " + quoted(model) + " -o " + quoted(gguf) + " -q");
    ASSERT_EQ(convert.exit_code, 0) << convert.err;
    const RunResult verify =
        rebox("verify " + quoted(model) + " " + quoted(gguf) + " --json " + quoted(report));
    ASSERT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    const json checked = json::parse(read_file(report));
    EXPECT_EQ(checked["ok"], true);
    EXPECT_EQ(checked["re_encoded_identical"], checked["re_encoded_total"]);
    bool saw_q5_1 = false;
    for (const json& t : checked["tensors"]) {
        EXPECT_EQ(t["identical"], true) << t.dump();
        if (t["gguf_name"] == "blk.0.attn_q.weight") {
            saw_q5_1 = true;
            EXPECT_EQ(t["type"], "Q5_1");
            EXPECT_EQ(t["re_encoded"], true);
            EXPECT_EQ(t["mismatches"], 0);
        }
    }
    EXPECT_TRUE(saw_q5_1);

    // One Q5_1 tensor among many Q4_1: general.file_type stays MOSTLY_Q4_1 (3).
    const RunResult inspect = rebox("inspect --json " + quoted(gguf));
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    EXPECT_NE(inspect.out.find("\"general.file_type\""), std::string::npos);
    const json info = json::parse(inspect.out);
    bool saw_file_type = false;
    for (const json& kv : info["kv"])
        if (kv["key"] == "general.file_type") {
            saw_file_type = true;
            EXPECT_EQ(kv["value"], 3) << kv.dump();
        }
    EXPECT_TRUE(saw_file_type) << inspect.out.substr(0, 2000);
}

// general.file_type of a GPTQ file is the llama_ftype of its most common block type (llama.h:
// MOSTLY_Q4_0 2, MOSTLY_Q5_0 8), counted here from the plan's own type list.
TEST_F(PlanCli, GptqFileTypeIsTheMostCommonBlockType) {
    for (const std::string flags : {"--bits 4 --sym", "--bits 4 --asym"}) {
        const fs::path model = fixture("gptq", "--format gptq " + flags + " --force");
        const RunResult js = rebox("plan --json " + quoted(model));
        ASSERT_EQ(js.exit_code, 0) << js.out << js.err;
        std::map<std::string, int> counts;
        const json plan = json::parse(js.out);
        for (const json& t : plan["tensors"])
            if (t.contains("bits")) ++counts[t["type"].get<std::string>()];
        std::string most;
        for (const auto& [type, n] : counts)
            if (most.empty() || n > counts[most]) most = type;
        const std::map<std::string, int> ftype = {
            {"Q4_0", 2}, {"Q4_1", 3}, {"Q5_0", 8}, {"Q8_0", 7}};
        ASSERT_TRUE(ftype.count(most)) << most;
        const fs::path gguf = work_ / "gptq.gguf";
        const RunResult convert =
            rebox("convert " + quoted(model) + " -o " + quoted(gguf) + " -q --force");
        ASSERT_EQ(convert.exit_code, 0) << convert.err;
        const RunResult inspect = rebox("inspect --json " + quoted(gguf));
        ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
        bool saw = false;
        const json info = json::parse(inspect.out);
        for (const json& kv : info["kv"])
            if (kv["key"] == "general.file_type") {
                saw = true;
                EXPECT_EQ(kv["value"], ftype.at(most)) << flags << ": most common " << most;
            }
        EXPECT_TRUE(saw);
    }
}

TEST_F(PlanCli, MissingModelDirIsAnInputError) {
    const RunResult r = rebox("plan " + quoted(work_ / "nope"));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("rebox: "), std::string::npos);
}

}  // namespace
}  // namespace rebox
