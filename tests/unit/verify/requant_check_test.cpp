// verify's threaded, row-at-a-time check of lossy tensors (verify/quantized/requant_check.hpp) on a
// stacked expert tensor from four F32 expert sources, quantized by llama.cpp's ggml_quantize_chunk
// (ggml_oracle.hpp) per expert with that expert's imatrix slice, as llama-quantize does: it passes
// on 1 and 3 threads with the same record, sampled and in full; the slices handed to the wrong
// experts, or no imatrix, fail; a changed byte in expert 2 is named by its block whatever the
// thread count; a wrong-size imatrix entry is the tensor's problem line.
#include "verify/quantized/requant_check.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"

namespace rebox::verify_ref {
namespace {

constexpr uint32_t kQ4_K = 12;
constexpr int64_t kExperts = 4, kRowsPerExpert = 40, kWidth = 512;

struct ExpertFixture {
    std::vector<std::vector<float>> expert_values;
    std::vector<SourceTensor> sources;
    std::vector<float> importance;  // kExperts slices of kWidth
    std::vector<uint8_t> bytes;     // the GGUF tensor, ggml's
    ValueJob job;

    ExpertFixture() {
        std::mt19937_64 rng(3);
        std::normal_distribution<float> normal(0.f, 0.05f);
        std::uniform_real_distribution<float> weight(0.f, 30.f);
        importance.resize(kExperts * kWidth);
        for (float& w : importance) w = weight(rng);
        expert_values.resize(kExperts);
        sources.resize(kExperts);
        for (int64_t e = 0; e < kExperts; ++e) {
            std::vector<float>& values = expert_values[e];
            values.resize(kRowsPerExpert * kWidth);
            for (float& v : values) v = normal(rng);
            const auto part = test::GgmlOracle::instance().quantize_rows(
                kQ4_K, values.data(), kRowsPerExpert, kWidth, importance.data() + e * kWidth);
            bytes.insert(bytes.end(), part.begin(), part.end());
            SourceTensor& s = sources[e];
            s.name = "model.layers.0.mlp.experts." + std::to_string(e) + ".up_proj.weight";
            s.shape = {kRowsPerExpert, kWidth};
            s.element_count = values.size();
            s.float_dtype = SourceFloat::F32;
            s.float_data = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                                                    values.size() * 4);
        }
        job.gguf_type = kQ4_K;
        job.gguf_data = bytes;
        job.source = &sources[0];
        job.values = kExperts * kRowsPerExpert * kWidth;
        for (const SourceTensor& s : sources) job.experts.push_back(&s);
        job.expert_values = kRowsPerExpert * kWidth;
        job.requantize = true;
    }
};

TensorCheck run_check(const ValueJob& job, std::span<const float> importance, bool full,
                      unsigned threads, std::string imatrix_problem = "") {
    TensorCheck check;
    check.gguf_name = "blk.0.ffn_up_exps.weight";
    RequantTask task{&job, kWidth, importance, std::move(imatrix_problem), &check};
    check_requantized_tensors(std::span<RequantTask>(&task, 1), full, threads, {});
    return check;
}

TEST(VerifyRequantCheck, ExpertSlicesPassOnAnyThreadCount) {
    REBOX_REQUIRE_GGML_ORACLE();
    const ExpertFixture f;
    for (const bool full : {false, true}) {
        const TensorCheck one = run_check(f.job, f.importance, full, 1);
        const TensorCheck three = run_check(f.job, f.importance, full, 3);
        SCOPED_TRACE(full ? "full" : "sampled");
        EXPECT_TRUE(one.requantized);
        EXPECT_TRUE(one.identical) << one.problem;
        EXPECT_TRUE(three.identical) << three.problem;
        EXPECT_EQ(one.blocks_total, uint64_t{kExperts * kRowsPerExpert * kWidth / 256});
        EXPECT_EQ(one.blocks_checked, full ? one.blocks_total : three.blocks_checked);
        EXPECT_LT(0u, one.blocks_checked);
        EXPECT_EQ(one.blocks_checked, three.blocks_checked);
        EXPECT_EQ(one.blocks_identical, three.blocks_identical);
        EXPECT_EQ(one.rmse, three.rmse);
        EXPECT_EQ(one.max_abs_error, three.max_abs_error);
        EXPECT_GT(one.rmse, 0.0);
    }
}

TEST(VerifyRequantCheck, WrongSlicesOrNoImatrixFail) {
    REBOX_REQUIRE_GGML_ORACLE();
    const ExpertFixture f;
    std::vector<float> rotated(f.importance.begin() + kWidth, f.importance.end());
    rotated.insert(rotated.end(), f.importance.begin(), f.importance.begin() + kWidth);
    EXPECT_FALSE(run_check(f.job, rotated, true, 2).identical);
    const TensorCheck without = run_check(f.job, {}, true, 2);
    EXPECT_FALSE(without.identical);
    EXPECT_NE(without.problem.find("differ from llama.cpp's quantizer"), std::string::npos);
}

TEST(VerifyRequantCheck, AChangedBlockIsNamedWhateverTheThreadCount) {
    REBOX_REQUIRE_GGML_ORACLE();
    ExpertFixture f;
    // Expert 2, row 7, block 1 (two 256-value blocks a row, 144 bytes each), byte 20.
    const uint64_t block = (2 * kRowsPerExpert + 7) * 2 + 1;
    f.bytes[block * 144 + 20] ^= 0x10;
    for (const unsigned threads : {1u, 3u}) {
        const TensorCheck check = run_check(f.job, f.importance, true, threads);
        EXPECT_FALSE(check.identical);
        EXPECT_EQ(check.blocks_checked - check.blocks_identical, 1u);
        EXPECT_NE(check.problem.find("1 of 320 blocks differ from llama.cpp's quantizer, first "
                                     "block " +
                                     std::to_string(block) + " at byte 20"),
                  std::string::npos)
            << check.problem;
    }
}

TEST(VerifyRequantCheck, ImatrixAndShapeProblemsAreTheTensorsLine) {
    REBOX_REQUIRE_GGML_ORACLE();
    const ExpertFixture f;
    const TensorCheck wrong =
        run_check(f.job, {}, false, 2, "m.imatrix: t: the entry has 3 values");
    EXPECT_TRUE(wrong.requantized);
    EXPECT_FALSE(wrong.identical);
    EXPECT_EQ(wrong.problem, "m.imatrix: t: the entry has 3 values");
    EXPECT_EQ(wrong.blocks_checked, 0u);
    ValueJob ragged = f.job;
    ragged.expert_values = kRowsPerExpert * kWidth + 256;  // experts not whole rows
    EXPECT_NE(run_check(ragged, {}, false, 2).problem.find("not whole rows"), std::string::npos);
    ValueJob truncated = f.job;
    truncated.gguf_data = truncated.gguf_data.first(truncated.gguf_data.size() - 1);
    EXPECT_NE(run_check(truncated, {}, false, 2).problem.find("the file is truncated"),
              std::string::npos);
}

// Scheduled as UnitScheduler's extra units (convert --quantize's verify behind the writing): the
// units tile the tensor's bytes in the file, none runs before its bytes are reported written
// (reported here back to front, in uneven pieces), and the record is check_requantized_tensors'
// own; a changed byte is still the one block named.
TEST(VerifyRequantCheck, ScheduledUnitsRunOnlyOnceTheirBytesAreWritten) {
    REBOX_REQUIRE_GGML_ORACLE();
    for (const bool flip : {false, true}) {
        SCOPED_TRACE(flip ? "a changed byte" : "ggml's bytes");
        ExpertFixture f;
        if (flip) f.bytes[2 * kRowsPerExpert * kWidth / 256 * 144 + 7] ^= 0x10;
        f.job.gguf_data = f.bytes;
        f.job.gguf_shard = 0;
        f.job.gguf_file_offset = 4096;
        TensorCheck check;
        check.gguf_name = "blk.0.ffn_up_exps.weight";
        RequantTask task{&f.job, kWidth, f.importance, "", &check};
        RequantChecker checker(std::span<RequantTask>(&task, 1), true, {});
        ASSERT_GT(checker.unit_count(), 1u);
        std::vector<size_t> runs(checker.unit_count(), 0);
        std::vector<UnitScheduler::ExtraUnit> extra;
        uint64_t end = 4096;
        for (size_t u = 0; u < checker.unit_count(); ++u) {
            const RequantChecker::ByteRange range = checker.unit_range(u);
            EXPECT_EQ(range.begin, end);  // contiguous, in order
            end = range.end;
            extra.push_back({0, range.begin, range.end, [&checker, &runs, u] {
                                 ++runs[u];
                                 checker.run_unit(u);
                             }});
        }
        EXPECT_EQ(end, 4096 + f.bytes.size());
        std::vector<ValueJob> no_jobs;
        UnitScheduler scheduler(no_jobs, {}, std::move(extra));
        EXPECT_FALSE(scheduler.run_ready_unit());
        // Back to front in pieces of 1000 bytes: a unit runs once its last piece is in.
        for (uint64_t written = 0; written < f.bytes.size();) {
            const uint64_t piece = std::min<uint64_t>(1000, f.bytes.size() - written);
            const uint64_t offset = 4096 + f.bytes.size() - written - piece;
            scheduler.region_written(0, offset, piece);
            written += piece;
            while (scheduler.run_ready_unit()) {
            }
            for (size_t u = 0; u < runs.size(); ++u) {
                const RequantChecker::ByteRange range = checker.unit_range(u);
                EXPECT_EQ(runs[u], range.begin >= offset ? 1u : 0u) << "unit " << u;
            }
        }
        scheduler.run_all(2);
        EXPECT_EQ(scheduler.units_done(), checker.unit_count());
        checker.finish();
        const TensorCheck direct = run_check(f.job, f.importance, true, 1);
        EXPECT_EQ(check.identical, !flip) << check.problem;
        EXPECT_EQ(check.blocks_checked, direct.blocks_checked);
        EXPECT_EQ(check.blocks_identical, direct.blocks_identical);
        EXPECT_EQ(check.problem, direct.problem);
        EXPECT_EQ(check.rmse, direct.rmse);
        EXPECT_EQ(check.blocks_total - check.blocks_identical, flip ? 1u : 0u);
    }
}

}  // namespace
}  // namespace rebox::verify_ref
