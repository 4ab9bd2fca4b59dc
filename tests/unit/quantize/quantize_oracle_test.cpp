// rebox's quantizers against llama.cpp's own (ggml_quantize_chunk from the prebuilt
// libggml-base.so): byte-identical for every type, with and without an imatrix, on
// REBOX_QUANT_TEST_VALUES generated and adversarial values per type and mode; identical when the
// rows are split into chunks as threads would; and for every kernel path this CPU runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "quant_test_data.hpp"
#include "quantize/quantize.hpp"
#include "rebox/rebox.hpp"

namespace rebox {
namespace {

using test::GgmlOracle;
using test::QuantCase;

const GgmlType kTypes[] = {GgmlType::Q4_0,  GgmlType::Q4_1,  GgmlType::Q5_0,   GgmlType::Q5_1,
                           GgmlType::Q8_0,  GgmlType::Q2_K,  GgmlType::Q3_K,   GgmlType::Q4_K,
                           GgmlType::Q5_K,  GgmlType::Q6_K,  GgmlType::IQ4_NL, GgmlType::IQ4_XS,
                           GgmlType::MXFP4, GgmlType::NVFP4, GgmlType::TQ1_0,  GgmlType::TQ2_0,
                           GgmlType::Q1_0,  GgmlType::Q2_0};

std::string hex(const uint8_t* p, size_t n) {
    std::string out;
    char buf[4];
    for (size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", p[i]);
        out += buf;
    }
    return out;
}

// Empty when equal; else type, mode, case, row, first differing byte and both blocks in hex.
std::string first_difference(GgmlType type, bool with_imatrix, const QuantCase& c,
                             const std::vector<uint8_t>& ours, const std::vector<uint8_t>& ggml) {
    const auto mismatch = std::mismatch(ours.begin(), ours.end(), ggml.begin());
    if (mismatch.first == ours.end()) return "";
    const GgmlTypeTraits traits = *ggml_type_traits(type);
    const size_t row_size = static_cast<size_t>(c.n_per_row / traits.block_size) * traits.type_size;
    const auto offset = static_cast<size_t>(mismatch.first - ours.begin());
    const size_t block_start = offset - offset % traits.type_size;
    std::ostringstream out;
    out << ggml_type_name(type) << (with_imatrix ? " with imatrix" : " without imatrix") << ", "
        << c.kind << " " << c.nrows << "x" << c.n_per_row << ": row " << offset / row_size
        << ", byte " << offset % row_size << " of the row (block "
        << (offset % row_size) / traits.type_size
        << ")\n  rebox: " << hex(ours.data() + block_start, traits.type_size)
        << "\n  ggml:  " << hex(ggml.data() + block_start, traits.type_size);
    return out.str();
}

std::vector<uint8_t> ggml_bytes(GgmlType type, const QuantCase& c, const float* imatrix) {
    const GgmlTypeTraits traits = *ggml_type_traits(type);
    std::vector<uint8_t> out(static_cast<size_t>(c.nrows * (c.n_per_row / traits.block_size)) *
                             traits.type_size);
    const size_t written = GgmlOracle::instance().quantize(type, c.values.data(), out.data(),
                                                           c.nrows, c.n_per_row, imatrix);
    EXPECT_EQ(written, out.size());
    return out;
}

// Compares `path`'s bytes with ggml's on cases until `values` values were compared; stops at
// the first difference (one message per type and mode).
void compare_with_ggml(quant::KernelPath path, GgmlType type, bool with_imatrix, int64_t values) {
    int64_t compared = 0;
    for (int index = 0; compared < values; ++index) {
        const QuantCase c = test::make_quant_case(index, std::min<int64_t>(1 << 16, values));
        const float* imatrix = with_imatrix ? c.imatrix.data() : nullptr;
        const std::vector<uint8_t> expected = ggml_bytes(type, c, imatrix);
        std::vector<uint8_t> ours(expected.size(), 0xa5);
        const size_t written = quant::quantize_rows_with(path, type, c.values.data(), ours.data(),
                                                         c.nrows, c.n_per_row, imatrix);
        ASSERT_EQ(written, expected.size()) << ggml_type_name(type);
        const std::string diff = first_difference(type, with_imatrix, c, ours, expected);
        ASSERT_TRUE(diff.empty()) << "[" << quant::kernel_path_name(path) << "] " << diff;
        compared += c.nrows * c.n_per_row;
    }
}

class QuantizeOracle : public ::testing::TestWithParam<GgmlType> {};

TEST_P(QuantizeOracle, ScalarKernelsMatchGgmlWithoutImatrix) {
    REBOX_REQUIRE_GGML_ORACLE();
    compare_with_ggml(quant::KernelPath::scalar, GetParam(), false, test::quant_test_values());
}

TEST_P(QuantizeOracle, ScalarKernelsMatchGgmlWithImatrix) {
    REBOX_REQUIRE_GGML_ORACLE();
    compare_with_ggml(quant::KernelPath::scalar, GetParam(), true, test::quant_test_values());
}

// The lane paths (when this CPU runs them) on a tenth of the values: they must give the same
// bytes as ggml too (and so as the scalar kernels).
TEST_P(QuantizeOracle, EveryKernelPathThisCpuRunsMatchesGgml) {
    REBOX_REQUIRE_GGML_ORACLE();
    int paths_run = 0;
    for (const auto path :
         {quant::KernelPath::sse2, quant::KernelPath::avx2, quant::KernelPath::avx512}) {
        if (!quant::kernel_path_supported(path)) continue;
        ++paths_run;
        for (const bool with_imatrix : {false, true}) {
            compare_with_ggml(path, GetParam(), with_imatrix,
                              std::max<int64_t>(1, test::quant_test_values() / 10));
        }
    }
    if (paths_run == 0)
        GTEST_SKIP() << "no SSE2/AVX2/AVX-512 kernel path in this build or on this CPU";
}

// Rows split into chunks (as a thread pool would) through the public API give ggml's bytes for
// the whole tensor.
TEST_P(QuantizeOracle, RowChunksGiveTheWholeTensorsBytes) {
    REBOX_REQUIRE_GGML_ORACLE();
    const GgmlType type = GetParam();
    const GgmlTypeTraits traits = *ggml_type_traits(type);
    for (int index : {1, 4, 10}) {
        const QuantCase c = test::make_quant_case(index);
        const size_t row_size =
            static_cast<size_t>(c.n_per_row / traits.block_size) * traits.type_size;
        for (const bool with_imatrix : {false, true}) {
            const float* imatrix = with_imatrix ? c.imatrix.data() : nullptr;
            const std::vector<uint8_t> expected = ggml_bytes(type, c, imatrix);
            std::vector<uint8_t> ours(expected.size(), 0x5a);
            const int64_t chunk = std::max<int64_t>(1, c.nrows / 3);
            for (int64_t r0 = 0; r0 < c.nrows; r0 += chunk) {
                const int64_t rows = std::min(chunk, c.nrows - r0);
                EXPECT_EQ(quantize_rows(type, c.values.data() + r0 * c.n_per_row,
                                        ours.data() + static_cast<size_t>(r0) * row_size, rows,
                                        c.n_per_row, imatrix),
                          static_cast<size_t>(rows) * row_size);
            }
            const std::string diff = first_difference(type, with_imatrix, c, ours, expected);
            EXPECT_TRUE(diff.empty()) << "chunks of " << chunk << " rows: " << diff;
        }
    }
}

// MXFP4's exponent is floorf(log2f(amax)): right at and right below every power of two from
// 2^-149 to 2^127, where a log2f that rounds differently would change the byte.
TEST(QuantizeOracleMxfp4, ExponentAtAndBelowEveryPowerOfTwo) {
    REBOX_REQUIRE_GGML_ORACLE();
    std::vector<float> values;
    for (int k = -149; k <= 127; ++k) {
        const float p = std::ldexp(1.0f, k);
        for (const float amax : {p, std::nextafter(p, 0.f), std::nextafter(p, INFINITY)}) {
            if (!std::isfinite(amax)) continue;
            for (int j = 0; j < 32; ++j) values.push_back(j == 5 ? -amax : amax * 0.25f * (j % 4));
        }
    }
    QuantCase c;
    c.kind = "powers of two";
    c.nrows = 1;
    c.n_per_row = static_cast<int64_t>(values.size());
    c.values = values;
    const std::vector<uint8_t> expected = ggml_bytes(GgmlType::MXFP4, c, nullptr);
    std::vector<uint8_t> ours(expected.size());
    quant::quantize_rows_with(quant::KernelPath::scalar, GgmlType::MXFP4, values.data(),
                              ours.data(), 1, c.n_per_row, nullptr);
    const std::string diff = first_difference(GgmlType::MXFP4, false, c, ours, expected);
    EXPECT_TRUE(diff.empty()) << diff;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, QuantizeOracle, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return ggml_type_name(info.param); });

}  // namespace
}  // namespace rebox
