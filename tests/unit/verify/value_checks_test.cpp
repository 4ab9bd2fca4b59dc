// The streaming comparison on hand-built pairs: an mcq 4-bit source against a Q4_1 tensor whose
// blocks are written out from the GGUF block definition (docs/gguf.md §2.2), and a large F32 copy
// checked by several threads, with single changes that must be found at the right index.
#include "verify/values/value_checks.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

// 64 codes c[i] = (i * 7) % 16, group 32; group 0: scale 1.0 min 0.0, group 1: scale 0.5 min -1.0.
struct Pair {
    std::vector<uint8_t> qcodes, scales, mins, q4_1;
    SourceTensor source;
    ValueJob job() const {
        ValueJob job;
        job.gguf_type = 3;  // Q4_1
        job.gguf_data = q4_1;
        job.source = &source;
        job.values = 64;
        return job;
    }
};

uint8_t code(int i) { return static_cast<uint8_t>((i * 7) % 16); }

Pair make_pair() {
    Pair p;
    for (int k = 0; k < 32; ++k)
        p.qcodes.push_back(code(2 * k) | (code(2 * k + 1) << 4));  // lsb0, 4 bits
    p.scales = {0x00, 0x3C, 0x00, 0x38};                           // 1.0, 0.5
    p.mins = {0x00, 0x00, 0x00, 0xBC};                             // 0.0, -1.0
    for (int b = 0; b < 2; ++b) {  // Q4_1: d | m | qs[j] = c[j] | c[j+16] << 4
        p.q4_1.insert(p.q4_1.end(),
                      {p.scales[2 * b], p.scales[2 * b + 1], p.mins[2 * b], p.mins[2 * b + 1]});
        for (int j = 0; j < 16; ++j)
            p.q4_1.push_back(code(32 * b + j) | (code(32 * b + j + 16) << 4));
    }
    p.source.name = "layers.0.mlp.up_proj.weight";
    p.source.quantized = true;
    p.source.shape = {2, 32};
    p.source.element_count = 64;
    p.source.quant = QuantView{p.qcodes, p.scales, p.mins, 4, 32};
    return p;
}

CompareResult run(const ValueJob& job) {
    std::vector<ValueJob> jobs{job};
    run_value_jobs(jobs, 2);
    return jobs[0].result;
}

TEST(VerifyValueChecks, FaithfulQ4_1IsIdentical) {
    const Pair p = make_pair();
    const CompareResult result = run(p.job());
    EXPECT_EQ(result.mismatches, 0u);
    EXPECT_EQ(result.max_abs_error, 0.0);
}

TEST(VerifyValueChecks, OneNibbleChangedIsFoundAtItsIndex) {
    Pair p = make_pair();
    p.q4_1[20 + 4 + 3] ^= 0x10;  // block 1, qs[3] high nibble: value 32 + 3 + 16 = 51
    const CompareResult result = run(p.job());
    EXPECT_EQ(result.mismatches, 1u);
    EXPECT_EQ(result.first_diff, 51u);
    // c[51] = 357 % 16 = 5 -> 5 * 0.5 - 1 = 1.5 expected; got nibble 5 ^ 1 = 4 -> 1.0.
    EXPECT_EQ(result.expected_bits, 0x3FC00000u);
    EXPECT_EQ(result.got_bits, 0x3F800000u);
    EXPECT_EQ(result.max_abs_error, 0.5);
}

TEST(VerifyValueChecks, SwappedBlockScalesAreFound) {
    Pair p = make_pair();
    std::swap(p.q4_1[0], p.q4_1[20]);  // low bytes of d in block 0 and 1 (0x00 and 0x00: no change)
    std::swap(p.q4_1[1], p.q4_1[21]);  // high bytes: d = 0.5 in block 0, 1.0 in block 1
    const CompareResult result = run(p.job());
    EXPECT_GT(result.mismatches, 0u);
    EXPECT_EQ(result.first_diff, 1u);  // c[0] = 0 gives 0 either way; c[1] = 7 differs
}

TEST(VerifyValueChecks, LargeF32CopyAcrossUnitsAndThreads) {
    const size_t n = 3 * kUnitValues + 96;  // several work units, last one short
    std::vector<uint8_t> source_bytes(4 * n), gguf_bytes;
    for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = float_bits(static_cast<float>(i) * 0.25f);
        std::memcpy(&source_bytes[4 * i], &bits, 4);
    }
    gguf_bytes = source_bytes;
    SourceTensor source;
    source.float_dtype = SourceFloat::F32;
    source.float_data = source_bytes;
    source.element_count = n;
    ValueJob job;
    job.gguf_type = 0;
    job.gguf_data = gguf_bytes;
    job.source = &source;
    job.values = n;
    EXPECT_EQ(run(job).mismatches, 0u);

    gguf_bytes[4 * (n - 1)] ^= 1;                   // last value, one ulp
    gguf_bytes[4 * (kUnitValues + 5) + 3] ^= 0x80;  // sign of a value in the second unit
    const CompareResult result = run(job);
    EXPECT_EQ(result.mismatches, 2u);
    EXPECT_EQ(result.first_diff, kUnitValues + 5);
    EXPECT_EQ(result.expected_bits ^ result.got_bits, 0x80000000u);
}

// The bytes a unit reads, hand-worked: Q4_1 blocks are 20 bytes per 32 values, the 4-bit source
// stream holds 2 codes per byte, one 2-byte scale and min per 32-value group.
TEST(VerifyValueChecks, JobBytesOfTheSecondBlock) {
    const Pair p = make_pair();
    const ValueJob job = p.job();
    const auto parts = job_bytes(job, 32, 32);
    ASSERT_EQ(parts.size(), 4u);
    EXPECT_EQ(parts[0].data() - p.q4_1.data(), 20);
    EXPECT_EQ(parts[0].size(), 20u);
    EXPECT_EQ(parts[1].data() - p.qcodes.data(), 16);
    EXPECT_EQ(parts[1].size(), 16u);
    EXPECT_EQ(parts[2].data() - p.scales.data(), 2);
    EXPECT_EQ(parts[2].size(), 2u);
    EXPECT_EQ(parts[3].data() - p.mins.data(), 2);
    // A partial block still names the whole block it is decoded from.
    const auto partial = job_bytes(job, 40, 4);
    EXPECT_EQ(partial[0].data() - p.q4_1.data(), 20);
    EXPECT_EQ(partial[0].size(), 20u);
    EXPECT_EQ(partial[1].data() - p.qcodes.data(), 20);
    EXPECT_EQ(partial[1].size(), 2u);
}

// In-memory spans are never released: passing mappings that do not hold them changes nothing.
TEST(VerifyValueChecks, MappingsThatHoldNothingLeaveResultsAlone) {
    const Pair p = make_pair();
    std::vector<ValueJob> jobs{p.job()};
    const MappedFile* none[] = {nullptr};
    run_value_jobs(jobs, 2, none);
    EXPECT_EQ(jobs[0].result.mismatches, 0u);
    EXPECT_EQ(p.q4_1[0], p.scales[0]);
}

}  // namespace
}  // namespace rebox::verify_ref
