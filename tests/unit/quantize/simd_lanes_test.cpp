// The lane kernels (SSE2, AVX2 and AVX-512; a path this CPU lacks is skipped) against llama.cpp's
// own ggml_quantize_chunk (the prebuilt libggml-base.so, dlopen'ed): the same bytes for every
// covered type, with and without an imatrix, on generated checkpoint-like rows of widths 256..8192
// and on adversarial rows. The number of generated values per type/mode/path is
// REBOX_QUANT_TEST_VALUES (default 2^20).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "quantize/kernel_path.hpp"
#include "quantize/simd/simd_kernels.hpp"
#include "quantize/simd_test_data.hpp"
#include "rebox/ggml_type.hpp"
#include "test_paths.hpp"

namespace rebox {
namespace {

using quant::KernelPath;
using test::GgmlOracle;

const GgmlOracle& oracle() { return GgmlOracle::instance(); }

int64_t value_budget() {
    if (const char* env = std::getenv("REBOX_QUANT_TEST_VALUES")) {
        const long long v = std::atoll(env);
        if (v > 0) return v;
    }
    return int64_t{1} << 20;
}

std::string hex_block(const uint8_t* p, size_t n) {
    std::string out;
    char buf[4];
    for (size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", p[i]);
        out += buf;
    }
    return out;
}

struct LaneCase {
    GgmlType type;
    bool imatrix;
    KernelPath path;
};

std::string case_name(const testing::TestParamInfo<LaneCase>& info) {
    return ggml_type_name(info.param.type) + (info.param.imatrix ? "_imatrix_" : "_ref_") +
           quant::kernel_path_name(info.param.path);
}

class LaneKernelVsGgml : public testing::TestWithParam<LaneCase> {
  protected:
    void SetUp() override {
        REBOX_REQUIRE_GGML_ORACLE();
        if (!quant::kernel_path_supported(GetParam().path))
            GTEST_SKIP() << "this CPU has no " << quant::kernel_path_name(GetParam().path);
        const auto traits = ggml_type_traits(GetParam().type);
        ASSERT_TRUE(traits.has_value());
        block_size_ = traits->block_size;
        block_bytes_ = traits->type_size;
    }

    // Quantizes with the lane kernel and with ggml; on a difference, fails with type, mode, path,
    // `what` (the data), the row, the first differing byte and both blocks.
    void expect_same_bytes(const std::string& what, const std::vector<float>& values,
                           int64_t n_per_row, const float* imatrix) {
        const LaneCase& c = GetParam();
        const int64_t nrows = static_cast<int64_t>(values.size()) / n_per_row;
        const size_t row_bytes = static_cast<size_t>(n_per_row / block_size_) * block_bytes_;
        std::vector<uint8_t> ours(row_bytes * nrows, 0xA5), theirs(row_bytes * nrows, 0x5A);
        ASSERT_TRUE(quant::quantize_rows_simd(c.path, c.type, values.data(), ours.data(), nrows,
                                              n_per_row, imatrix))
            << ggml_type_name(c.type) << " has no lane kernel";
        ASSERT_EQ(oracle().quantize(ggml_type_id(c.type), values.data(), theirs.data(), nrows,
                                    n_per_row, imatrix),
                  theirs.size());
        if (ours == theirs) return;
        const auto diff = std::mismatch(ours.begin(), ours.end(), theirs.begin());
        const size_t at = static_cast<size_t>(diff.first - ours.begin());
        const size_t row = at / row_bytes, block = (at % row_bytes) / block_bytes_;
        const size_t block_start = row * row_bytes + block * block_bytes_;
        ADD_FAILURE() << ggml_type_name(c.type) << (c.imatrix ? " imatrix" : " ref") << " path "
                      << quant::kernel_path_name(c.path) << ", " << what << " (" << nrows << " x "
                      << n_per_row << "): row " << row << ", block " << block
                      << ", first differing byte " << at - block_start << " of the block (byte "
                      << at << " of the output)\n  rebox: "
                      << hex_block(ours.data() + block_start, block_bytes_)
                      << "\n  ggml:  " << hex_block(theirs.data() + block_start, block_bytes_);
    }

    uint32_t block_size_ = 0, block_bytes_ = 0;
};

TEST_P(LaneKernelVsGgml, GeneratedRowsMatchGgml) {
    std::vector<int64_t> widths = {256, 512, 1024, 2048, 4096, 8192, 768, 1280, 3072};
    if (block_size_ == 32)
        widths.insert(widths.end(), {96, 288, 4128});  // block counts off the lane width
    if (block_size_ == 256)
        widths.push_back(5120);  // 20 super-blocks: a batch of 16 and a partial one in a row
    const int64_t budget = value_budget();
    int64_t done = 0;
    for (int step = 0; done < budget; ++step) {
        const int64_t width = widths[step % widths.size()];
        const int kind = (step / static_cast<int>(widths.size())) % 4;
        const bool heavy = kind != 0;
        const test::ValueGrid grid = kind == 2   ? test::ValueGrid::f16
                                     : kind == 3 ? test::ValueGrid::f32
                                                 : test::ValueGrid::bf16;
        const int64_t nrows = std::max<int64_t>(1, 32768 / width);
        const auto values = test::checkpoint_rows(nrows, width, heavy, grid, 1000 + step);
        const auto im = test::importance_matrix(width, 2000 + step);
        std::ostringstream what;
        what << "generated step " << step << (heavy ? " student-t" : " normal") << " grid " << kind;
        expect_same_bytes(what.str(), values, width, GetParam().imatrix ? im.data() : nullptr);
        if (HasFailure()) return;
        done += nrows * width;
    }
    std::printf("  %lld values compared\n", static_cast<long long>(done));
}

TEST_P(LaneKernelVsGgml, AdversarialRowsMatchGgml) {
    const int64_t width = 512;
    const auto im = test::importance_matrix(width, 7);
    const auto zero_blocks = test::blockwise_zero_imatrix(width);
    const std::vector<float> all_zero(width, 0.f);
    std::vector<float> stacked;
    for (const auto& row : test::adversarial_rows(width)) {
        stacked.insert(stacked.end(), row.values.begin(), row.values.end());
        if (!GetParam().imatrix) {
            expect_same_bytes(row.name, row.values, width, nullptr);
            continue;
        }
        expect_same_bytes(row.name + " / imatrix", row.values, width, im.data());
        expect_same_bytes(row.name + " / imatrix zero on blocks", row.values, width,
                          zero_blocks.data());
        expect_same_bytes(row.name + " / imatrix all zero", row.values, width, all_zero.data());
    }
    expect_same_bytes("all adversarial rows in one call", stacked, width,
                      GetParam().imatrix ? im.data() : nullptr);
}

// NaN inputs: ggml's scans skip a NaN (`amax < fabsf(v)`, `v < min`) except Q8_0's
// MAX(amax, fabsf(v)), which keeps it until the next element; the lanes follow each. Probed per
// type: rows with a NaN inside a block, at a block's end and everywhere.
TEST_P(LaneKernelVsGgml, NanRowsMatchGgml) {
    const GgmlType type = GetParam().type;
    if (!GetParam().imatrix && (type == GgmlType::Q4_0 || type == GgmlType::Q4_1))
        GTEST_SKIP()
            << "ggml's (int8_t) of a NaN code is undefined in C; its GCC-vectorized loop yields "
               "bytes no scalar rule gives (the lanes give the low byte of cvttps2dq's 0x80000000)";
    const int64_t width = 256;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> values = test::checkpoint_rows(3, width, false, test::ValueGrid::bf16, 5);
    values[7] = nan;           // row 0: inside the first block
    values[width + 31] = nan;  // row 1: last element of a 32-value block
    for (int64_t j = 0; j < width; ++j) values[2 * width + j] = j % 2 ? nan : 1.f;  // row 2
    const auto im = test::importance_matrix(width, 9);
    expect_same_bytes("rows with NaN", values, width, GetParam().imatrix ? im.data() : nullptr);
}

std::vector<LaneCase> lane_cases() {
    std::vector<LaneCase> cases;
    for (GgmlType type :
         {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
          GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q4_1, GgmlType::Q5_1,
          GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4, GgmlType::NVFP4, GgmlType::TQ1_0,
          GgmlType::TQ2_0, GgmlType::Q1_0, GgmlType::Q2_0})
        for (bool imatrix : {false, true})
            for (KernelPath path : {KernelPath::sse2, KernelPath::avx2, KernelPath::avx512})
                cases.push_back({type, imatrix, path});
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Lanes, LaneKernelVsGgml, testing::ValuesIn(lane_cases()), case_name);

// Infinities and blocks so small that 1/amax overflows: the TQ1_0/TQ2_0/Q1_0/Q2_0/NVFP4 lanes
// take v = x * (1/amax) = +-inf or NaN (0 * inf) there, where ggml's lroundf / (int)roundf give
// x86's out-of-range integer. Probed for those types, for MXFP4 (an infinite amax, whose exponent
// and codes take ggml's own search) and for Q5_1's ref path (d = inf or NaN in fp16, codes of
// (x - min) * 0 = NaN; Q4_1's (int8_t) of a NaN code is undefined, as in NanRowsMatchGgml).
class LaneKernelInfVsGgml : public LaneKernelVsGgml {};

TEST_P(LaneKernelInfVsGgml, InfAndTinyRowsMatchGgml) {
    const int64_t width = 256;
    const float inf = std::numeric_limits<float>::infinity();
    const float tiny = std::numeric_limits<float>::denorm_min();
    std::vector<float> values = test::checkpoint_rows(4, width, false, test::ValueGrid::bf16, 11);
    values[5] = inf;           // row 0: +inf among ordinary values
    values[width + 9] = -inf;  // row 1: -inf, twice
    values[width + 200] = inf;
    for (int64_t j = 0; j < width; ++j)  // row 2: subnormals and zeros, 1/amax = inf
        values[2 * width + j] = j % 3 == 0 ? 0.f : (j % 2 ? tiny : -3 * tiny);
    for (int64_t j = 0; j < width; ++j)  // row 3: every value infinite or zero
        values[3 * width + j] = j % 4 == 0 ? 0.f : (j % 2 ? inf : -inf);
    const auto im = test::importance_matrix(width, 13);
    expect_same_bytes("rows with infinities and tiny values", values, width,
                      GetParam().imatrix ? im.data() : nullptr);
}

std::vector<LaneCase> inf_lane_cases() {
    std::vector<LaneCase> cases;
    for (const LaneCase& c : lane_cases())
        if (c.type == GgmlType::TQ1_0 || c.type == GgmlType::TQ2_0 || c.type == GgmlType::Q1_0 ||
            c.type == GgmlType::Q2_0 || c.type == GgmlType::NVFP4 || c.type == GgmlType::MXFP4 ||
            (c.type == GgmlType::Q5_1 && !c.imatrix))
            cases.push_back(c);
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Lanes, LaneKernelInfVsGgml, testing::ValuesIn(inf_lane_cases()),
                         case_name);

// MXFP4's exponent floor(log2f(amax)) near every power of two: one block per amax, for every
// binade of normal floats the 64 floats at each end of it and the 128 floats around each edge
// of the lanes' 4096-float guard bands (inside them the exponent is libm's; outside it is read
// from the bits), plus subnormal amaxes. The block's other values sit on the midpoints between
// neighbouring grid magnitudes (m_i + m_{i+1}) / 2 * 2^(E-3) and one float either side, both
// signs, where ggml's first-wins search must keep the lower entry on a tie.
class LaneKernelMxfp4VsGgml : public LaneKernelVsGgml {};

std::vector<float> mxfp4_power_of_two_blocks() {
    constexpr uint32_t kGuard = 4096;
    std::vector<uint32_t> amax_bits;
    for (uint32_t field = 1; field <= 254; ++field)
        for (uint32_t m = 0; m < 64; ++m) {
            for (uint32_t mantissa : {m, kGuard - 64 + m, kGuard + m, 0x7fffffu - kGuard - 63 + m,
                                      0x7fffffu - kGuard + 1 + m, 0x7fffffu - 63 + m})
                amax_bits.push_back(field << 23 | mantissa);
        }
    for (uint32_t m = 1; m < 0x800000u; m = m * 3 + 1) amax_bits.push_back(m);  // subnormals
    while (amax_bits.size() % 128) amax_bits.push_back(0x3f800000u);  // whole 4096-value rows
    constexpr float kMid[7] = {0.5f, 1.5f, 2.5f, 3.5f, 5.f, 7.f, 10.f};
    std::vector<float> values;
    values.reserve(amax_bits.size() * 32);
    for (size_t b = 0; b < amax_bits.size(); ++b) {
        float amax;
        std::memcpy(&amax, &amax_bits[b], sizeof amax);
        const float d = std::ldexp(1.f, std::ilogb(amax) - 3);
        for (int j = 0; j < 32; ++j) {
            if (j == static_cast<int>(b % 32)) {
                values.push_back(b % 3 ? amax : -amax);
                continue;
            }
            float v = kMid[j % 7] * d;
            const int nudge = (j / 7) % 3;
            if (nudge == 0) v = std::nextafter(v, 0.f);
            if (nudge == 2) v = std::nextafter(v, std::numeric_limits<float>::infinity());
            if (!(v < amax)) v = 7.f * d;
            values.push_back(j % 2 ? -v : v);
        }
    }
    return values;
}

TEST_P(LaneKernelMxfp4VsGgml, AmaxNearPowersOfTwoMatchGgml) {
    const int64_t width = 4096;
    const auto values = mxfp4_power_of_two_blocks();
    const auto im = test::importance_matrix(width, 17);
    expect_same_bytes("blocks whose amax is near a power of two", values, width,
                      GetParam().imatrix ? im.data() : nullptr);
}

std::vector<LaneCase> mxfp4_lane_cases() {
    std::vector<LaneCase> cases;
    for (const LaneCase& c : lane_cases())
        if (c.type == GgmlType::MXFP4) cases.push_back(c);
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Lanes, LaneKernelMxfp4VsGgml, testing::ValuesIn(mxfp4_lane_cases()),
                         case_name);

// Q3_K's ref search runs its later coordinate-descent tries only for the sub-blocks whose first
// try changed a code, gathered into full lanes per batch of 16 super-blocks. Uniform values make
// about 30% of sub-blocks change (checkpoint-like rows about 15%), so a batch holds more of them
// than one gathering of 4 x 16 lanes takes.
class LaneKernelQ3KVsGgml : public LaneKernelVsGgml {};

TEST_P(LaneKernelQ3KVsGgml, ManyLaterTriesMatchGgml) {
    const int64_t width = 4096;
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    std::vector<float> values(4 * width);
    for (float& v : values) v = uniform(rng);
    const auto im = test::importance_matrix(width, 19);
    expect_same_bytes("uniform rows", values, width, GetParam().imatrix ? im.data() : nullptr);
}

std::vector<LaneCase> q3_k_lane_cases() {
    std::vector<LaneCase> cases;
    for (const LaneCase& c : lane_cases())
        if (c.type == GgmlType::Q3_K) cases.push_back(c);
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Lanes, LaneKernelQ3KVsGgml, testing::ValuesIn(q3_k_lane_cases()),
                         case_name);

TEST(LaneKernels, DeclineWhatTheyDoNotCover) {
    std::vector<float> values(256, 1.f);
    std::vector<uint8_t> out(256, 0xEE);
    EXPECT_FALSE(quant::quantize_rows_simd(KernelPath::scalar, GgmlType::Q4_K, values.data(),
                                           out.data(), 1, 256, nullptr));
    EXPECT_FALSE(quant::quantize_rows_simd(KernelPath::sse2, GgmlType::IQ2_XXS, values.data(),
                                           out.data(), 1, 256, nullptr));
    EXPECT_FALSE(quant::quantize_rows_simd(KernelPath::sse2, GgmlType::F16, values.data(),
                                           out.data(), 1, 256, nullptr));
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint8_t b) { return b == 0xEE; }))
        << "wrote on a decline";
}

TEST(KernelPath, EnvironmentOverridesWhenSupported) {
    const char* saved = std::getenv("REBOX_KERNEL_PATH");
    const std::string restore = saved ? saved : "";
    setenv("REBOX_KERNEL_PATH", "scalar", 1);
    EXPECT_EQ(quant::best_kernel_path(), KernelPath::scalar);
#if defined(__x86_64__)
    setenv("REBOX_KERNEL_PATH", "sse2", 1);
    EXPECT_EQ(quant::best_kernel_path(), KernelPath::sse2);
    setenv("REBOX_KERNEL_PATH", "avx2", 1);
    // Without AVX2 the override is ignored and the best supported path (SSE2) is taken.
    EXPECT_EQ(quant::best_kernel_path(),
              __builtin_cpu_supports("avx2") ? KernelPath::avx2 : KernelPath::sse2);
    setenv("REBOX_KERNEL_PATH", "avx512", 1);
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    const KernelPath best = avx512                           ? KernelPath::avx512
                            : __builtin_cpu_supports("avx2") ? KernelPath::avx2
                                                             : KernelPath::sse2;
    EXPECT_EQ(quant::best_kernel_path(), best);
    EXPECT_EQ(quant::kernel_path_supported(KernelPath::avx512), avx512);
    unsetenv("REBOX_KERNEL_PATH");
    EXPECT_EQ(quant::best_kernel_path(), best);
    EXPECT_TRUE(quant::kernel_path_supported(KernelPath::sse2));
#endif
#if defined(__x86_64__)
    setenv("REBOX_KERNEL_PATH", "neon", 1);  // unknown: ignored
    EXPECT_NE(quant::best_kernel_path(), KernelPath::scalar);
#endif
    if (saved)
        setenv("REBOX_KERNEL_PATH", restore.c_str(), 1);
    else
        unsetenv("REBOX_KERNEL_PATH");
}

}  // namespace
}  // namespace rebox
