// `rebox diff` on converted tiny fixtures: a split -> merge round trip is the same file, a Q4_1
// file and its --outtype f32 twin hold the same values in every quantized tensor, one flipped bit
// names its tensor, only differences are listed unless --all, and exit codes 0 same / 1 different /
// 2 unreadable; two NVFP4 files that differ in one value are measured by value.
#include <cstring>
#include <nlohmann/json.hpp>

#include "format/gguf_file.hpp"
#include "format/gguf_layout.hpp"
#include "format/half.hpp"
#include "gguf_tools/tool_fixture.hpp"
#include "test_files.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::quoted;

class DiffCli : public test::GgufToolTest {};

TEST_F(DiffCli, SplitMergeRoundTripIsTheSame) {
    const fs::path file = converted("a.gguf");
    ASSERT_EQ(rebox("split " + quoted(file) + " " + quoted(dir_ / "s") + " --split-max-tensors 7")
                  .exit_code,
              0);
    ASSERT_EQ(
        rebox("merge " + quoted(dir_ / "s-00001-of-00004.gguf") + " " + quoted(dir_ / "m.gguf"))
            .exit_code,
        0);
    const auto merged = rebox("diff " + quoted(file) + " " + quoted(dir_ / "m.gguf"));
    EXPECT_EQ(merged.exit_code, 0) << merged.out << merged.err;
    EXPECT_TRUE(contains(merged.out, "same: 24 tensors, KVs equal\n")) << merged.out;
    // The split set itself (first shard given) against the file: split.* keys are not compared.
    const auto split = rebox("diff " + quoted(dir_ / "s-00001-of-00004.gguf") + " " + quoted(file));
    EXPECT_EQ(split.exit_code, 0) << split.out << split.err;
}

TEST_F(DiffCli, Q4_1AndItsF32TwinHoldTheSameValues) {
    const fs::path q = converted("q.gguf");
    const fs::path f = converted("f.gguf", "f32");
    const auto r = rebox("diff --json " + quoted(q) + " " + quoted(f));
    EXPECT_EQ(r.exit_code, 1) << r.err;  // general.file_type differs
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["same"], false);
    ASSERT_EQ(j["kvs"].size(), 1u) << r.out;
    EXPECT_EQ(j["kvs"][0]["key"], "general.file_type");
    size_t quantized = 0;
    for (const auto& t : j["tensors"]) {
        if (t["type_a"] == "Q4_1") {
            ++quantized;
            EXPECT_EQ(t["verdict"], "same values") << t.dump();
            EXPECT_EQ(t["type_b"], "F32");
        } else {
            EXPECT_EQ(t["verdict"], "identical bytes") << t.dump();
        }
    }
    EXPECT_EQ(quantized, 15u);  // token_embd + 7 matrices in each of 2 blocks
}

TEST_F(DiffCli, OneFlippedBitNamesItsTensor) {
    const fs::path file = converted("a.gguf");
    fs::copy_file(file, dir_ / "flip.gguf");
    uint64_t at = 0;
    float d = 0;
    {
        const auto g = GgufFile::open(file);
        const GgufTensorInfo* t = g->find_tensor("blk.1.ffn_up.weight");
        ASSERT_NE(t, nullptr);
        at = g->data_offset() + t->offset;
        const auto bytes = g->tensor_data(*t);
        d = half_to_float(static_cast<uint16_t>(bytes[0] | bytes[1] << 8));
    }
    ASSERT_NE(d, 0.0f);
    auto bytes = test::read_file_bytes(dir_ / "flip.gguf");
    bytes[at + 4] ^= 0x01;  // lowest bit of element 0's code: its value moves by exactly d
    test::write_file(dir_ / "flip.gguf", bytes);
    const auto r = rebox("diff " + quoted(file) + " " + quoted(dir_ / "flip.gguf"));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    char expected[200];
    std::snprintf(expected, sizeof expected,
                  "tensor blk.1.ffn_up.weight: different (Q4_1 -> Q4_1: 1 of %d values differ, max "
                  "abs error %.9g)\n",
                  128 * 64, static_cast<double>(std::fabs(d)));
    EXPECT_TRUE(contains(r.out, expected)) << expected << "\n" << r.out;
    size_t differing_lines = 0;
    for (size_t pos = 0; (pos = r.out.find(": different", pos)) != std::string::npos; ++pos)
        ++differing_lines;
    EXPECT_EQ(differing_lines, 1u) << r.out;
    EXPECT_TRUE(contains(r.out, "different: 0 KV difference(s), 1 of 24 tensors differ\n"))
        << r.out;
}

// Two NVFP4 files (block_nvfp4: d[4] UE4M3 scales, one per 16 values, then qs[32]; in sub-block s
// byte qs[8s + j] holds value 16s + j low and 16s + j + 8 high). "n" has two blocks: the second's
// scale 0x40 is 2.0 and value 72 (high nibble of its qs[0]) is E2M1 code 1 (0.5) * 2 = 1 in A and
// code 9 (-0.5) * 2 = -1 in B: one value, 2 apart. "n_nan" differs in bytes (code 1 against code 7,
// both positive) under scale 0x7F, which ggml reads as 0, so both values are +0: the same values.
TEST_F(DiffCli, Nvfp4FilesDifferingInOneValue) {
    auto write = [&](const fs::path& path, uint8_t block2_q0, uint8_t nan_q) {
        std::vector<uint8_t> n(72, 0), n_nan(36, 0);
        n[0] = 0x38, n[4] = 0x97;  // first block, identical in both: scale 1.0, values 6 and -0.5
        n[36] = 0x40, n[40] = block2_q0;
        n_nan[1] = 0x7F, n_nan[12] = nan_q;
        GgufLayout layout;
        layout.add_tensor("n", {128}, GgmlType::NVFP4);
        layout.add_tensor("n_nan", {64}, GgmlType::NVFP4);
        const std::vector<std::vector<uint8_t>> data{n, n_nan};
        write_gguf(
            path, layout,
            [&](size_t i, std::span<uint8_t> out) {
                std::memcpy(out.data(), data[i].data(), out.size());
            },
            true);
    };
    write(dir_ / "a.gguf", 0x17, 0x01);
    write(dir_ / "b.gguf", 0x97, 0x07);
    const auto r = rebox("diff --all " + quoted(dir_ / "a.gguf") + " " + quoted(dir_ / "b.gguf"));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.out,
                         "tensor n: different (NVFP4 -> NVFP4: 1 of 128 values differ, max abs "
                         "error 2)\n"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "tensor n_nan: same values")) << r.out;
    EXPECT_TRUE(contains(r.out, "different: 0 KV difference(s), 1 of 2 tensors differ")) << r.out;
}

// Text lists only what differs plus the summary; --all lists every tensor.
TEST_F(DiffCli, TextListsOnlyDifferencesUnlessAll) {
    const fs::path q = converted("q.gguf");
    const fs::path f = converted("f.gguf", "f32");
    const auto brief = rebox("diff " + quoted(q) + " " + quoted(f));
    EXPECT_EQ(brief.exit_code, 1) << brief.err;
    EXPECT_EQ(test::line_count(brief.out), 2u) << brief.out;  // the file_type KV and the summary
    EXPECT_TRUE(contains(brief.out, "kv changed  general.file_type")) << brief.out;
    EXPECT_FALSE(contains(brief.out, "tensor ")) << brief.out;
    EXPECT_TRUE(contains(brief.out,
                         "different: 1 KV difference(s), 0 of 24 tensors differ, 15 equal only as "
                         "values (another type)\n"))
        << brief.out;
    const auto all = rebox("diff --all " + quoted(q) + " " + quoted(f));
    EXPECT_EQ(all.exit_code, 1) << all.err;
    EXPECT_EQ(test::line_count(all.out), 26u) << all.out;  // the KV, 24 tensors, the summary
    EXPECT_TRUE(contains(all.out, "tensor output_norm.weight: identical bytes\n")) << all.out;
    EXPECT_TRUE(contains(all.out, "tensor token_embd.weight: same values (Q4_1 -> F32")) << all.out;
    const auto same = rebox("diff --all " + quoted(q) + " " + quoted(q));
    EXPECT_EQ(same.exit_code, 0);
    EXPECT_EQ(test::line_count(same.out), 25u) << same.out;
    EXPECT_EQ(rebox("diff " + quoted(q) + " " + quoted(q)).out, "same: 24 tensors, KVs equal\n");
}

TEST_F(DiffCli, KvChangesTensorRenamesAndArraysAreListed) {
    const fs::path file = converted("a.gguf");
    ASSERT_EQ(rebox("meta " + quoted(file) + " -o " + quoted(dir_ / "b.gguf") +
                    " --set general.name=other --rename-tensor output_norm.weight=on.weight")
                  .exit_code,
              0);
    const auto r = rebox("diff " + quoted(file) + " " + quoted(dir_ / "b.gguf"));
    EXPECT_EQ(r.exit_code, 1);
    // The fixture directory "model" is named "Model" (the converter's str.title() casing).
    EXPECT_TRUE(contains(r.out, "kv changed  general.name: STRING 'Model' -> STRING 'other'\n"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "tensor output_norm.weight: removed (F32 [64], only in A)\n"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "tensor on.weight: added (F32 [64], only in B)\n")) << r.out;
    // An array: one token more, first difference at the appended index.
    const auto g = GgufFile::open(file);
    const size_t n = g->find("tokenizer.ggml.tokens")->array.size();
    std::string json = "[";
    for (size_t i = 0; i < n; ++i)
        json += nlohmann::json(std::get<std::string>(g->find("tokenizer.ggml.tokens")->array[i]))
                    .dump() +
                ",";
    json += "\"extra\"]";
    std::ofstream(dir_ / "tokens.json") << json;
    ASSERT_EQ(rebox("meta " + quoted(file) + " -o " + quoted(dir_ / "c.gguf") +
                    " --delete tokenizer.ggml.tokens --set 'tokenizer.ggml.tokens:ARRAY[STRING]=@" +
                    (dir_ / "tokens.json").string() + "'")
                  .exit_code,
              0);
    const auto arr = rebox("diff " + quoted(file) + " " + quoted(dir_ / "c.gguf"));
    EXPECT_TRUE(contains(arr.out, "(length " + std::to_string(n) + " vs " + std::to_string(n + 1) +
                                      ", first difference at index " + std::to_string(n) + ")"))
        << arr.out;
}

TEST_F(DiffCli, UnreadableInputExitsTwoWithOneLine) {
    const fs::path file = converted("a.gguf");
    std::ofstream(dir_ / "junk.gguf") << "definitely not a GGUF file, just some text here";
    for (const std::string& other :
         {(dir_ / "junk.gguf").string(), (dir_ / "absent.gguf").string()}) {
        const auto r = rebox("diff " + quoted(file) + " " + test::quoted(fs::path(other)));
        EXPECT_EQ(r.exit_code, 2) << r.out;
        EXPECT_EQ(test::line_count(r.err), 1u) << r.err;
        EXPECT_TRUE(contains(r.err, other)) << r.err;
        EXPECT_EQ(r.out, "");
    }
    ASSERT_EQ(rebox("split " + quoted(file) + " " + quoted(dir_ / "s") + " --split-max-tensors 10")
                  .exit_code,
              0);
    fs::remove(dir_ / "s-00002-of-00003.gguf");
    const auto missing =
        rebox("diff " + quoted(dir_ / "s-00001-of-00003.gguf") + " " + quoted(file));
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_TRUE(contains(missing.err, "shard 2 of 3 is missing")) << missing.err;
}

}  // namespace
}  // namespace rebox
