// verify's kernel paths (REBOX_VERIFY_KERNELS=scalar|sse2|avx2) against values worked out here
// from the formats' definitions: mcq-v1 value = float(code) * scale + min (binary32, multiply then
// add), Q4_1 value = nibble * d + m (docs/gguf.md §2.2), lsb0 nibbles low first. Each path must
// give these values and the same verdicts, including for a change in the last lane of a vector
// and in the scalar tail.
#include "verify/values/ref_kernels.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "verify/values/ref_dequant.hpp"
#include "verify/values/ref_expected.hpp"
#include "verify/values/ref_half.hpp"
#include "verify/values/value_checks.hpp"

namespace rebox::verify_ref {
namespace {

uint32_t bits_of(float value) { return float_bits(value); }  // verify's own bit view

// The spec's mcq-v1 value with each operation rounded to binary32 on its own (volatile keeps the
// compiler from fusing or reordering them).
float mcq_formula(unsigned code, float scale, float min) {
    volatile float product = static_cast<float>(code) * scale;
    volatile float sum = product + min;
    return sum;
}

// Forces one kernel path for the test's lifetime (restores automatic choice afterwards).
class KernelPathTest : public ::testing::TestWithParam<KernelPath> {
  protected:
    void SetUp() override {
        const std::string name(kernel_path_name(GetParam()));
        ::setenv("REBOX_VERIFY_KERNELS", name.c_str(), 1);
        const KernelPath got = select_kernels();
        if (got != GetParam()) GTEST_SKIP() << "this CPU cannot run the " << name << " path";
        ASSERT_EQ(kernels().path, GetParam());
    }
    void TearDown() override {
        ::unsetenv("REBOX_VERIFY_KERNELS");
        select_kernels();
    }
};

// Codes c[i] = (i * 5 + i / 16) % 16, 4-bit lsb0: byte j = c[2j] | c[2j+1] << 4.
uint8_t code(uint64_t i) { return static_cast<uint8_t>((i * 5 + i / 16) % 16); }

// Group g: scale (g % 7 + 1) * 0.1 rounded to fp16, min -(g % 5) * 0.3 rounded to fp16; both as
// fp16 bits, widened by the reference table (tested against the binary16 definition elsewhere).
uint16_t scale_half(uint64_t g) {
    static const uint16_t table[7] = {0x2E66, 0x3266, 0x34CD, 0x3666, 0x3800, 0x38CD, 0x399A};
    return table[g % 7];  // 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7 (nearest fp16)
}
uint16_t min_half(uint64_t g) {
    static const uint16_t table[5] = {0x0000, 0xB4CD, 0xB8CD, 0xBB33, 0xBCCD};
    return table[g % 5];  // 0, -0.3, -0.6, -0.9, -1.2 (nearest fp16)
}

struct Mcq4 {
    std::vector<uint8_t> qcodes, scales, mins;
    unsigned bits = 4;
    QuantView view(uint64_t group) const {
        return QuantView{qcodes, scales, mins, bits, group, SourceFloat::F16};
    }
};

// Code i of a `bits`-bit fixture: c[i] mod 2^bits.
unsigned code_of(uint64_t i, unsigned bits) { return code(i) % (1u << bits); }

// Packed as the spec's lsb0 stream: code i at stream bits i*bits.., stream bit k = bit k%8 of
// byte k/8, zero padding to the byte.
Mcq4 make_mcq(uint64_t count, uint64_t group, unsigned bits) {
    Mcq4 m;
    m.bits = bits;
    m.qcodes.assign((count * bits + 7) / 8, 0);
    for (uint64_t i = 0; i < count; ++i)
        for (unsigned b = 0; b < bits; ++b)
            if ((code_of(i, bits) >> b) & 1u) {
                const uint64_t k = i * bits + b;
                m.qcodes[k / 8] |= static_cast<uint8_t>(1u << (k % 8));
            }
    for (uint64_t g = 0; g < count / group; ++g) {
        m.scales.push_back(scale_half(g) & 0xFF), m.scales.push_back(scale_half(g) >> 8);
        m.mins.push_back(min_half(g) & 0xFF), m.mins.push_back(min_half(g) >> 8);
    }
    return m;
}

Mcq4 make_mcq4(uint64_t count, uint64_t group) { return make_mcq(count, group, 4); }

TEST_P(KernelPathTest, McqValuesMatchTheFormulaAcrossHeadVectorsAndTail) {
    // Group 24 and starts at 3 and 17: runs of 21, 24, ... so every run has whole vectors and a
    // tail, and the code extraction has an unaligned head, whole 8-code groups and a tail; each
    // width 1..8 (the AVX2 path reads 1..4-bit codes from the stream itself), up to the stream's
    // last byte and short of it.
    // Short of the end by one group from 0: whole groups, the one-call path of the AVX2 kernel.
    constexpr uint64_t kCount = 24 * 20, kGroup = 24;
    for (unsigned bits = 1; bits <= 8; ++bits) {
        const Mcq4 m = make_mcq(kCount, kGroup, bits);
        for (const uint64_t first : {uint64_t{0}, uint64_t{3}, uint64_t{17}}) {
            for (const uint64_t short_of_end : {uint64_t{0}, uint64_t{5}, uint64_t{24}}) {
                const size_t n = static_cast<size_t>(kCount - first - short_of_end);
                std::vector<uint8_t> scratch(n);
                std::vector<float> out(n);
                expected_from_quantized(m.view(kGroup), first, scratch, out);
                for (size_t k = 0; k < n; ++k) {
                    const uint64_t i = first + k, g = i / kGroup;
                    const float want =
                        mcq_formula(code_of(i, bits), half_bits_to_float(scale_half(g)),
                                    half_bits_to_float(min_half(g)));
                    ASSERT_EQ(bits_of(out[k]), bits_of(want))
                        << bits << "-bit, first " << first << ", value " << i;
                }
            }
        }
    }
}

// Q4_1 blocks of the mcq codes above with group 32 (one block per group, d = scale, m = min).
std::vector<uint8_t> q4_1_of(const Mcq4& m, uint64_t count) {
    std::vector<uint8_t> blocks;
    for (uint64_t b = 0; b < count / 32; ++b) {
        blocks.insert(blocks.end(),
                      {m.scales[2 * b], m.scales[2 * b + 1], m.mins[2 * b], m.mins[2 * b + 1]});
        for (uint64_t j = 0; j < 16; ++j)
            blocks.push_back(code(32 * b + j) | (code(32 * b + j + 16) << 4));
    }
    return blocks;
}

TEST_P(KernelPathTest, Q4_1BlocksDecodeAsTheBlockDefinition) {
    constexpr uint64_t kCount = 32 * 9;
    const Mcq4 m = make_mcq4(kCount, 32);
    const std::vector<uint8_t> blocks = q4_1_of(m, kCount);
    std::vector<float> out(kCount);
    dequantize_range(3, blocks, 0, out);  // ggml type 3 = Q4_1
    for (uint64_t i = 0; i < kCount; ++i) {
        const uint64_t b = i / 32;
        const float want = mcq_formula(code(i), half_bits_to_float(scale_half(b)),
                                       half_bits_to_float(min_half(b)));
        ASSERT_EQ(bits_of(out[i]), bits_of(want)) << "value " << i;
    }
}

TEST_P(KernelPathTest, NibbleSplitKeepsLowNibbleFirstIncludingTheTail) {
    std::vector<uint8_t> bytes(16 * 3 + 7), codes(2 * bytes.size(), 0xEE);
    for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = static_cast<uint8_t>(j * 37 + 11);
    kernels().split_nibbles(bytes.data(), bytes.size(), codes.data());
    for (size_t j = 0; j < bytes.size(); ++j) {
        ASSERT_EQ(codes[2 * j], bytes[j] % 16) << "byte " << j;
        ASSERT_EQ(codes[2 * j + 1], bytes[j] / 16) << "byte " << j;
    }
}

CompareResult verdict_group(const Mcq4& m, const std::vector<uint8_t>& blocks, uint64_t count,
                            uint64_t group) {
    SourceTensor source;
    source.name = "layers.0.mlp.down_proj.weight";
    source.quantized = true;
    source.shape = {static_cast<int64_t>(count / 128), 128};
    source.element_count = count;
    source.quant = m.view(group);
    std::vector<ValueJob> jobs(1);
    jobs[0].gguf_type = 3;
    jobs[0].gguf_data = blocks;
    jobs[0].source = &source;
    jobs[0].values = count;
    run_value_jobs(jobs, 1);
    return jobs[0].result;
}

CompareResult verdict(const Mcq4& m, const std::vector<uint8_t>& blocks, uint64_t count) {
    return verdict_group(m, blocks, count, 32);
}

TEST_P(KernelPathTest, ChangesInTheLastLaneAndTheLastValueAreFound) {
    // Two chunks (8192 values each) and a last partial one: 32 * 520 = 16640 values.
    constexpr uint64_t kCount = 32 * 520;
    const Mcq4 m = make_mcq4(kCount, 32);
    const std::vector<uint8_t> faithful = q4_1_of(m, kCount);
    EXPECT_EQ(verdict(m, faithful, kCount).mismatches, 0u);
    // Value 15 of block 300 is the last lane of its 16-value vector (qs[15], low nibble); the
    // tensor's last value is block 519's value 31 (qs[15], high nibble).
    for (const uint64_t index : {uint64_t{300 * 32 + 15}, uint64_t{kCount - 1}}) {
        std::vector<uint8_t> changed = faithful;
        const uint64_t block = index / 32, j = index % 32;
        changed[block * 20 + 4 + j % 16] ^= (j < 16 ? 0x01 : 0x10);
        const CompareResult result = verdict(m, changed, kCount);
        EXPECT_EQ(result.mismatches, 1u) << index;
        EXPECT_EQ(result.first_diff, index);
        const float scale = half_bits_to_float(scale_half(block));
        const float min = half_bits_to_float(min_half(block));
        EXPECT_EQ(result.expected_bits, bits_of(mcq_formula(code(index), scale, min))) << index;
        EXPECT_EQ(result.got_bits, bits_of(mcq_formula(code(index) ^ 1u, scale, min))) << index;
    }
}

// Q4_1 blocks of a `bits`-bit fixture with group `group` (a multiple of 32): block b holds values
// 32b..32b+31, d and m its group's scale and min.
std::vector<uint8_t> q4_1_of_group(const Mcq4& m, uint64_t count, uint64_t group) {
    std::vector<uint8_t> blocks;
    for (uint64_t b = 0; b < count / 32; ++b) {
        const uint64_t g = b * 32 / group;
        blocks.insert(blocks.end(),
                      {m.scales[2 * g], m.scales[2 * g + 1], m.mins[2 * g], m.mins[2 * g + 1]});
        for (uint64_t j = 0; j < 16; ++j)
            blocks.push_back(static_cast<uint8_t>(code_of(32 * b + j, m.bits) |
                                                  (code_of(32 * b + j + 16, m.bits) << 4)));
    }
    return blocks;
}

TEST_P(KernelPathTest, EveryWidthAndGroupFindsEachChangedValueAndBlockHeader) {
    // 1- to 4-bit codes in groups of 32, 64 and 128 (the in-register compare of the AVX2 path
    // covers each 8-value quarter of a block: one changed nibble in each, the d and the m of a
    // block in the middle of a group, and the tensor's last value).
    constexpr uint64_t kCount = 128 * 80;  // 10240 values: a whole chunk and a partial one
    for (unsigned bits = 1; bits <= 4; ++bits) {
        for (const uint64_t group : {uint64_t{32}, uint64_t{64}, uint64_t{128}}) {
            const Mcq4 m = make_mcq(kCount, group, bits);
            const std::vector<uint8_t> faithful = q4_1_of_group(m, kCount, group);
            ASSERT_EQ(verdict_group(m, faithful, kCount, group).mismatches, 0u)
                << bits << "-bit, group " << group;
            for (const uint64_t index :
                 {uint64_t{41 * 32 + 3}, uint64_t{77 * 32 + 8 + 7}, uint64_t{200 * 32 + 16},
                  uint64_t{301 * 32 + 24 + 5}, uint64_t{kCount - 1}}) {
                std::vector<uint8_t> changed = faithful;
                const uint64_t block = index / 32, j = index % 32;
                // Toggle the nibble's top bit: a code the fixture's width cannot hold (1..3 bits)
                // or another code (4 bits); either way a different value.
                changed[block * 20 + 4 + j % 16] ^= (j < 16 ? 0x08 : 0x80);
                const CompareResult result = verdict_group(m, changed, kCount, group);
                EXPECT_EQ(result.mismatches, 1u)
                    << bits << "-bit, group " << group << ", " << index;
                EXPECT_EQ(result.first_diff, index) << bits << "-bit, group " << group;
            }
            for (const size_t field : {size_t{0}, size_t{2}}) {  // d, then m, of block 150
                std::vector<uint8_t> changed = faithful;
                changed[150 * 20 + field] ^= 0x01;  // the fp16's lowest mantissa bit
                const CompareResult result = verdict_group(m, changed, kCount, group);
                EXPECT_GT(result.mismatches, 0u)
                    << bits << "-bit, group " << group << ", field " << field;
                EXPECT_GE(result.first_diff, 150u * 32) << bits << "-bit, group " << group;
                EXPECT_LT(result.first_diff, 151u * 32) << bits << "-bit, group " << group;
            }
        }
    }
}

TEST_P(KernelPathTest, OtherCodesUnderAZeroScaleAreStillTheSameValues) {
    // Block 5's group has scale 0 on both sides, so every code gives its min: a block whose codes
    // differ from the source's (AVX2: the code compare says no, the value compare must say yes)
    // is bit-identical, and a changed min is not.
    constexpr uint64_t kCount = 32 * 300;
    for (unsigned bits = 1; bits <= 4; ++bits) {
        Mcq4 m = make_mcq(kCount, 32, bits);
        m.scales[2 * 5] = 0x00, m.scales[2 * 5 + 1] = 0x00;  // fp16 +0
        std::vector<uint8_t> blocks = q4_1_of_group(m, kCount, 32);
        for (size_t j = 0; j < 16; ++j) blocks[5 * 20 + 4 + j] ^= 0x11;  // every code changed
        EXPECT_EQ(verdict_group(m, blocks, kCount, 32).mismatches, 0u) << bits << "-bit";
        blocks[5 * 20 + 2] ^= 0x01;  // m's lowest mantissa bit
        EXPECT_EQ(verdict_group(m, blocks, kCount, 32).mismatches, 32u) << bits << "-bit";
    }
}

TEST_P(KernelPathTest, OddBlockCountsCompareEveryBlockToTheLast) {
    // 263 blocks: a chunk of 256, then 7 (the AVX2 path compares 3- and 4-bit codes two blocks at
    // a time and the last blocks one by one, reading only their own bytes). A changed nibble in
    // the first and second block of a pair and in each of the last three blocks is found.
    constexpr uint64_t kCount = 32 * 263;
    for (unsigned bits = 1; bits <= 4; ++bits) {
        const Mcq4 m = make_mcq(kCount, 32, bits);
        // The stream cut to the codes' own bytes: a read past them is a test failure under ASan.
        Mcq4 tight = m;
        tight.qcodes.resize(kCount * bits / 8);
        const std::vector<uint8_t> faithful = q4_1_of_group(tight, kCount, 32);
        ASSERT_EQ(verdict_group(tight, faithful, kCount, 32).mismatches, 0u) << bits << "-bit";
        for (const uint64_t block : {uint64_t{256}, uint64_t{257}, uint64_t{258}, uint64_t{260},
                                     uint64_t{261}, uint64_t{262}}) {
            std::vector<uint8_t> changed = faithful;
            changed[block * 20 + 4 + 15] ^= 0x80;  // value 31 of the block
            const CompareResult result = verdict_group(tight, changed, kCount, 32);
            EXPECT_EQ(result.mismatches, 1u) << bits << "-bit, block " << block;
            EXPECT_EQ(result.first_diff, block * 32 + 31) << bits << "-bit, block " << block;
        }
    }
}

TEST_P(KernelPathTest, ABlockHeaderOtherThanTheGroupsCanStillHoldEveryValue) {
    // Group 7's scale is +0 and its block's d is -0: other fp16 bits, yet every value is
    // code * (+-0) + min = min on both sides (the AVX2 path must not take unequal headers as
    // unequal values); a d of +0 with a changed min is not.
    constexpr uint64_t kCount = 32 * 64;
    for (unsigned bits = 1; bits <= 4; ++bits) {
        Mcq4 m = make_mcq(kCount, 32, bits);
        m.scales[2 * 7] = 0x00, m.scales[2 * 7 + 1] = 0x00;  // fp16 +0
        std::vector<uint8_t> blocks = q4_1_of_group(m, kCount, 32);
        blocks[7 * 20 + 1] = 0x80;  // d = fp16 -0
        EXPECT_EQ(verdict_group(m, blocks, kCount, 32).mismatches, 0u) << bits << "-bit";
        blocks[7 * 20 + 1] = 0x00;
        blocks[7 * 20 + 3] ^= 0x04;  // m's exponent changed
        EXPECT_EQ(verdict_group(m, blocks, kCount, 32).mismatches, 32u) << bits << "-bit";
    }
}

TEST_P(KernelPathTest, Bf16ParametersCarriedAsFp16BlocksCompareByValue) {
    // MLX stores bfloat16 scales and biases; a block holds them as fp16 when they are exact. Group
    // g's scale and min are hand-picked bfloat16 values with their fp16 twins: 0.5 = bf16 0x3F00 =
    // fp16 0x3800, 0.375 = 0x3EC0 = 0x3600, 2^-10 = 0x3A80 = 0x1400, -1.25 = 0xBFA0 = 0xBD00,
    // 0 = 0x0000 = 0x0000. Faithful blocks compare equal; a changed nibble, d or m is found in its
    // own block.
    struct Pair {
        uint16_t bf16, fp16;
    };
    const Pair scales[] = {{0x3F00, 0x3800}, {0x3EC0, 0x3600}, {0x3A80, 0x1400}};
    const Pair mins[] = {{0xBFA0, 0xBD00}, {0x0000, 0x0000}};
    constexpr uint64_t kCount = 64 * 90;
    for (unsigned bits = 1; bits <= 4; ++bits) {
        Mcq4 m = make_mcq(kCount, 64, bits);
        std::vector<uint8_t> blocks = q4_1_of_group(m, kCount, 64);
        for (uint64_t g = 0; g < kCount / 64; ++g) {
            const Pair s = scales[g % 3], n = mins[g % 2];
            m.scales[2 * g] = s.bf16 & 0xFF, m.scales[2 * g + 1] = s.bf16 >> 8;
            m.mins[2 * g] = n.bf16 & 0xFF, m.mins[2 * g + 1] = n.bf16 >> 8;
            for (uint64_t b = 2 * g; b < 2 * g + 2; ++b) {
                blocks[b * 20] = s.fp16 & 0xFF, blocks[b * 20 + 1] = s.fp16 >> 8;
                blocks[b * 20 + 2] = n.fp16 & 0xFF, blocks[b * 20 + 3] = n.fp16 >> 8;
            }
        }
        const auto verdict_bf16 = [&](const std::vector<uint8_t>& held) {
            SourceTensor source;
            source.name = "layers.0.mlp.down_proj.weight";
            source.quantized = true;
            source.shape = {static_cast<int64_t>(kCount / 128), 128};
            source.element_count = kCount;
            source.quant = QuantView{m.qcodes, m.scales, m.mins, bits, 64, SourceFloat::BF16};
            std::vector<ValueJob> jobs(1);
            jobs[0].gguf_type = 3;
            jobs[0].gguf_data = held;
            jobs[0].source = &source;
            jobs[0].values = kCount;
            run_value_jobs(jobs, 1);
            return jobs[0].result;
        };
        ASSERT_EQ(verdict_bf16(blocks).mismatches, 0u) << bits << "-bit";
        std::vector<uint8_t> changed = blocks;
        changed[101 * 20 + 4 + 3] ^= 0x08;  // value 3 of block 101: a code off by 8
        CompareResult result = verdict_bf16(changed);
        EXPECT_EQ(result.mismatches, 1u) << bits << "-bit";
        EXPECT_EQ(result.first_diff, 101u * 32 + 3) << bits << "-bit";
        for (const size_t field : {size_t{0}, size_t{2}}) {  // d, then m, of block 150
            changed = blocks;
            changed[150 * 20 + field] ^= 0x01;
            result = verdict_bf16(changed);
            EXPECT_GT(result.mismatches, 0u) << bits << "-bit, field " << field;
            EXPECT_GE(result.first_diff, 150u * 32) << bits << "-bit, field " << field;
            EXPECT_LT(result.first_diff, 151u * 32) << bits << "-bit, field " << field;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(VerifyKernels, KernelPathTest,
                         ::testing::Values(KernelPath::scalar, KernelPath::sse2, KernelPath::avx2),
                         [](const ::testing::TestParamInfo<KernelPath>& info) {
                             return std::string(kernel_path_name(info.param));
                         });

}  // namespace
}  // namespace rebox::verify_ref
