// verify's imatrix reader (verify/quantized/ref_imatrix.hpp) on hand-made files (imatrix_bytes.hpp): legacy
// and GGUF values normalized as llama-quantize's load_imatrix does (expected values worked by hand
// from its rules: legacy sum / ncall, GGUF sum / lround(count) per slice, 1 for a count that rounds
// to 0), which entry a tensor gets, and hostile files refused with one line naming the file and
// the entry.
#include "verify/quantized/ref_imatrix.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "rebox/error.hpp"
#include "verify/imatrix_bytes.hpp"

namespace rebox::verify_ref {
namespace {

using test_imatrix::GgufImatrixKeys;
using test_imatrix::GgufImatrixTensor;
using test_imatrix::LegacyEntry;

constexpr const char* kFile = "model.imatrix";

// The message of the Error parsing `bytes` throws ("" when it does not throw).
std::string refusal(const std::vector<uint8_t>& bytes) {
    try {
        parse_ref_imatrix(bytes, kFile);
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        return e.what();
    }
    return "";
}

void expect_refused(const std::vector<uint8_t>& bytes, const std::string& entry,
                    const std::string& what) {
    const std::string message = refusal(bytes);
    ASSERT_FALSE(message.empty()) << "not refused: " << what;
    EXPECT_EQ(message.rfind(std::string(kFile) + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(entry), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
}

TEST(RefImatrix, LegacyDividesByNcall) {
    const auto bytes = test_imatrix::legacy_imatrix({
        {"blk.0.attn_q.weight", 4, {2.f, 6.f, 1.f, 0.f}},
        {"blk.0.ffn_up.weight", 0, {3.f, 5.f}},              // ncall 0: the values as they are
        {"blk.0.ffn_gate.weight", -2, {7.f, 9.f}},           // ncall < 0: as they are too
        {std::string("output.weight\0tail", 18), 3, {1.f}},  // the name ends at its NUL
    });
    const RefImatrix m = parse_ref_imatrix(bytes, kFile);
    EXPECT_TRUE(m.legacy);
    ASSERT_EQ(m.entries.size(), 4u);
    EXPECT_EQ(m.entries.at("blk.0.attn_q.weight"), (std::vector<float>{0.5f, 1.5f, 0.25f, 0.f}));
    EXPECT_EQ(m.entries.at("blk.0.ffn_up.weight"), (std::vector<float>{3.f, 5.f}));
    EXPECT_EQ(m.entries.at("blk.0.ffn_gate.weight"), (std::vector<float>{7.f, 9.f}));
    EXPECT_EQ(m.entries.at("output.weight"), (std::vector<float>{1.f / 3.f}));
}

TEST(RefImatrix, LegacyRepeatedNameKeepsTheLastAndTrailerIsOptional) {
    auto bytes = test_imatrix::legacy_imatrix({{"w", 2, {4.f}}, {"w", 1, {9.f, 8.f}}});
    const RefImatrix m = parse_ref_imatrix(bytes, kFile);
    EXPECT_EQ(m.entries.at("w"), (std::vector<float>{9.f, 8.f}));
    // Without the trailer (chunk count, dataset): the same entries.
    bytes.resize(bytes.size() - 4 - 4 - 10);
    EXPECT_EQ(parse_ref_imatrix(bytes, kFile).entries.at("w"), (std::vector<float>{9.f, 8.f}));
}

std::vector<uint8_t> one_gguf_entry(std::vector<float> sums, std::vector<float> counts,
                                    const GgufImatrixKeys& keys = {}) {
    const int64_t slices = static_cast<int64_t>(counts.size());
    const int64_t ne0 = slices ? static_cast<int64_t>(sums.size()) / slices : 0;
    return test_imatrix::gguf_imatrix({{"blk.0.ffn_down_exps.weight.in_sum2", {ne0, slices}, sums},
                                       {"blk.0.ffn_down_exps.weight.counts", {1, slices}, counts}},
                                      keys);
}

TEST(RefImatrix, GgufDividesEachSliceByItsRoundedCount) {
    // counts 2.5 -> lround 3; 0.4 -> 0 (weights 1); 1.0 -> 1; -7 -> -7 (not positive: weights 1).
    const auto bytes =
        one_gguf_entry({2.f, 4.f, 6.f, 8.f, 9.f, 10.f, 11.f, 12.f, 0.5f, 0.25f, 13.f, 14.f},
                       {2.5f, 0.4f, 1.0f, -7.f});
    const RefImatrix m = parse_ref_imatrix(bytes, kFile);
    EXPECT_FALSE(m.legacy);
    ASSERT_EQ(m.entries.size(), 1u);
    EXPECT_EQ(m.entries.at("blk.0.ffn_down_exps.weight"),
              (std::vector<float>{2.f / 3.f, 4.f / 3.f, 2.f, 1.f, 1.f, 1.f, 11.f, 12.f, 0.5f, 1.f,
                                  1.f, 1.f}));
}

TEST(RefImatrix, GgufIgnoresOtherTensorsAndPairsByName) {
    const auto bytes = test_imatrix::gguf_imatrix({
        {"a.counts", {1, 1}, {2.f}},
        {"notes", {2}, {1.f, 2.f}},  // neither suffix: not an entry
        {"b.in_sum2", {2, 1}, {3.f, 6.f}},
        {"a.in_sum2", {2, 1}, {1.f, 5.f}},
        {"b.counts", {1, 1}, {3.f}},
    });
    const RefImatrix m = parse_ref_imatrix(bytes, kFile);
    ASSERT_EQ(m.entries.size(), 2u);
    EXPECT_EQ(m.entries.at("a"), (std::vector<float>{0.5f, 2.5f}));
    EXPECT_EQ(m.entries.at("b"), (std::vector<float>{1.f, 2.f}));
}

TEST(RefImatrix, HostileLegacyFilesAreOneLineNamingTheEntry) {
    const auto good = test_imatrix::legacy_imatrix({{"blk.0.attn_k.weight", 2, {1.f, 2.f, 3.f}}});
    auto truncated = good;
    truncated.resize(4 + 4 + 19 + 4 + 4 + 8);  // the third value is missing
    expect_refused(truncated, "entry 1 (blk.0.attn_k.weight) values",
                   "needs 12 bytes at offset 35, the file has 8 left");
    expect_refused(std::vector<uint8_t>{1, 0}, "entry count", "needs 4 bytes");
    expect_refused(test_imatrix::legacy_imatrix({}), "entry count", "no entries");
    auto negative = good;
    negative[4] = 0xff, negative[5] = 0xff, negative[6] = 0xff, negative[7] = 0xff;
    expect_refused(negative, "entry 1 name length", "is negative (-1)");
    auto huge = good;
    huge[4] = 0xff, huge[5] = 0xff, huge[6] = 0xff, huge[7] = 0x7f;
    expect_refused(huge, "entry 1 name", "needs 2147483647 bytes");
    expect_refused(test_imatrix::legacy_imatrix({{"w", 1, {}}}), "entry 1 (w) value count",
                   "is 0, no values");
    auto short_second = test_imatrix::legacy_imatrix({{"w", 1, {1.f}}, {"v", 1, {2.f}}}, 0, "");
    short_second.resize(short_second.size() - 8 - 4 - 4 - 4 - 1);  // before the second name
    expect_refused(short_second, "entry 2 name", "needs 1 bytes at offset 25, the file has 0 left");
    expect_refused(test_imatrix::legacy_imatrix({{"w", 1, {1.f, NAN}}}), "w",
                   "normalized value 1 is not finite");
    expect_refused(test_imatrix::legacy_imatrix({{"w", 0, {INFINITY}}}), "w", "not finite");
}

TEST(RefImatrix, HostileGgufFilesAreOneLineNamingTheEntry) {
    const std::vector<float> sums{1.f, 2.f, 3.f, 4.f}, counts{1.f, 2.f};
    EXPECT_NO_THROW(parse_ref_imatrix(one_gguf_entry(sums, counts), kFile));
    for (const char* key : {"imatrix.datasets", "imatrix.chunk_count", "imatrix.chunk_size"}) {
        GgufImatrixKeys keys;
        keys.datasets = std::string(key) != "imatrix.datasets";
        keys.chunk_count = std::string(key) != "imatrix.chunk_count";
        keys.chunk_size = std::string(key) != "imatrix.chunk_size";
        expect_refused(one_gguf_entry(sums, counts, keys), key, "missing");
    }
    GgufImatrixKeys signed_count;
    signed_count.chunk_count_type = 5;
    expect_refused(one_gguf_entry(sums, counts, signed_count), "imatrix.chunk_count",
                   "not a UINT32");
    expect_refused(test_imatrix::gguf_imatrix({{"w.in_sum2", {2, 1}, {1.f, 2.f}}}), "w",
                   "has in_sum2 but no counts tensor");
    expect_refused(test_imatrix::gguf_imatrix({{"w.counts", {1, 1}, {1.f}}}), "w",
                   "has counts but no in_sum2 tensor");
    expect_refused(test_imatrix::gguf_imatrix(
                       {{"w.in_sum2", {6}, {1, 2, 3, 4, 5, 6}}, {"w.counts", {4}, {1, 1, 1, 1}}}),
                   "w", "6 sums do not split into 4 equal slices");
    expect_refused(test_imatrix::gguf_imatrix(
                       {{"w.in_sum2", {2, 1}, {1.f, 2.f}, 1}, {"w.counts", {1, 1}, {1.f}}}),
                   "w.in_sum2", "is not F32");
    expect_refused(one_gguf_entry(sums, {1.f, NAN}), "blk.0.ffn_down_exps.weight.counts",
                   "count 1 is not a finite token count");
    expect_refused(one_gguf_entry(sums, {1e30f, 1.f}), "blk.0.ffn_down_exps.weight.counts",
                   "count 0 is not a finite token count");
    expect_refused(one_gguf_entry({1.f, INFINITY, 3.f, 4.f}, counts), "blk.0.ffn_down_exps.weight",
                   "normalized value 1 is not finite");
    expect_refused(test_imatrix::gguf_imatrix({}), "tensors", "no entries");
    // A file that starts as a GGUF but is cut short: the container reader's line.
    auto cut = one_gguf_entry(sums, counts);
    cut.resize(40);
    EXPECT_EQ(refusal(cut).rfind(std::string(kFile) + ": ", 0), 0u);
}

TEST(RefImatrix, EntryForATensorAsLlamaQuantizeChoosesIt) {
    RefImatrix m;
    m.file = kFile;
    m.entries["blk.0.attn_q.weight"] = std::vector<float>(64, 1.f);
    m.entries["blk.0.ffn_down_exps.weight"] = std::vector<float>(32 * 4, 2.f);
    m.entries["token_embd.weight"] = std::vector<float>(10, 1.f);
    m.entries["per_layer_token_embd.weight"] = std::vector<float>(10, 1.f);
    m.entries["blk.0.attn_k.weight"] = std::vector<float>(63, 1.f);
    EXPECT_EQ(ref_imatrix_entry(m, "blk.0.attn_q.weight", 64, 1).weights.size(), 64u);
    EXPECT_EQ(ref_imatrix_entry(m, "blk.0.ffn_down_exps.weight", 32, 4).weights.size(), 128u);
    EXPECT_TRUE(ref_imatrix_entry(m, "blk.0.ffn_down_exps.weight", 32, 4).problem.empty());
    const RefImatrixEntry absent = ref_imatrix_entry(m, "output.weight", 64, 1);
    EXPECT_TRUE(absent.weights.empty());
    EXPECT_TRUE(absent.problem.empty());
    for (const char* embd : {"token_embd.weight", "per_layer_token_embd.weight"}) {
        const RefImatrixEntry ignored = ref_imatrix_entry(m, embd, 64, 1);
        EXPECT_TRUE(ignored.weights.empty()) << embd;
        EXPECT_TRUE(ignored.problem.empty()) << embd;
    }
    const RefImatrixEntry wrong = ref_imatrix_entry(m, "blk.0.attn_k.weight", 64, 1);
    EXPECT_TRUE(wrong.weights.empty());
    EXPECT_NE(wrong.problem.find("model.imatrix: blk.0.attn_k.weight: the imatrix entry has 63 "
                                 "values, the tensor needs 64 x 1"),
              std::string::npos)
        << wrong.problem;
    EXPECT_FALSE(ref_imatrix_entry(m, "blk.0.ffn_down_exps.weight", 32, 3).problem.empty());
    EXPECT_FALSE(ref_imatrix_entry(m, "blk.0.attn_q.weight", uint64_t{1} << 40, uint64_t{1} << 40)
                     .problem.empty());
}

}  // namespace
}  // namespace rebox::verify_ref
