// verify's re-quantizer (verify/quantized/ref_quantize.hpp) against llama.cpp's own
// ggml_quantize_chunk (the prebuilt libggml-base.so, ggml_oracle.hpp): every block byte for byte,
// for all 13 types, without and with importance, on ~10^6 generated values per case
// (REBOX_QUANT_TEST_VALUES raises it; a fifth by default under ASan) and the adversarial rows. A
// failure names the type, mode, matrix, row, block, first differing byte and prints both blocks.
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "verify/quant_oracle_data.hpp"
#include "verify/quantized/ref_quantize.hpp"

namespace rebox::verify_ref {
namespace {

struct TypeCase {
    uint32_t id;
    const char* name;
};

constexpr TypeCase kTypes[] = {
    {2, "Q4_0"},   {3, "Q4_1"},   {6, "Q5_0"},   {7, "Q5_1"},   {8, "Q8_0"},    {10, "Q2_K"},
    {11, "Q3_K"},  {12, "Q4_K"},  {13, "Q5_K"},  {14, "Q6_K"},  {20, "IQ4_NL"}, {23, "IQ4_XS"},
    {39, "MXFP4"}, {40, "NVFP4"}, {34, "TQ1_0"}, {35, "TQ2_0"}, {41, "Q1_0"},   {42, "Q2_0"}};

std::string hex(const uint8_t* bytes, size_t count) {
    std::ostringstream out;
    char two[4];
    for (size_t i = 0; i < count; ++i) {
        std::snprintf(two, sizeof two, "%02x", bytes[i]);
        out << two << (i + 1 < count ? " " : "");
    }
    return out.str();
}

// 10^6 values per type and mode; a fifth of that in the sanitizer build, whose job there is
// memory and UB checking rather than coverage (the Release run covers the values).
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kDefaultValues = 200'000;
#else
constexpr uint64_t kDefaultValues = 1'000'000;
#endif

class RefQuantizeOracle : public ::testing::TestWithParam<std::tuple<TypeCase, bool>> {};

TEST_P(RefQuantizeOracle, BlocksEqualGgml) {
    const auto& [type, with_importance] = GetParam();
    REBOX_REQUIRE_GGML_ORACLE();
    const test::GgmlOracle& oracle = test::GgmlOracle::instance();
    RefQuantLayout layout{};
    ASSERT_TRUE(ref_quant_layout(type.id, &layout));
    const char* mode = with_importance ? "importance" : "no importance";
    const uint64_t target = test::quant_test_values(kDefaultValues);
    const auto matrices =
        test::quant_oracle_matrices(layout.block_values, with_importance, target, 23 + type.id);

    // Thread CPU time, so the figures mean something on a shared machine.
    struct Clock {
        using duration = std::chrono::nanoseconds;
        static duration now() {
            timespec t{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
            return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
        }
    };
    Clock::duration ggml_time{}, ref_time{};
    uint64_t values = 0, blocks = 0, differing = 0;
    std::vector<uint8_t> mine(layout.block_bytes);
    for (const auto& m : matrices) {
        const float* importance = m.importance.empty() ? nullptr : m.importance.data();
        auto start = Clock::now();
        const std::vector<uint8_t> expected =
            oracle.quantize_rows(type.id, m.values.data(), m.rows, m.width, importance);
        ggml_time += Clock::now() - start;
        const uint64_t blocks_per_row = static_cast<uint64_t>(m.width) / layout.block_values;
        ASSERT_EQ(expected.size(), m.rows * blocks_per_row * layout.block_bytes);
        start = Clock::now();
        for (int64_t r = 0; r < m.rows; ++r) {
            const std::span<const float> row_values(m.values.data() + r * m.width,
                                                    static_cast<size_t>(m.width));
            const QuantRow row = make_quant_row(type.id, row_values, m.importance);
            for (uint64_t b = 0; b < blocks_per_row; ++b) {
                ref_quantize_block(type.id, row, b, mine);
                const uint8_t* theirs =
                    expected.data() + (r * blocks_per_row + b) * layout.block_bytes;
                ++blocks;
                size_t first = 0;
                while (first < layout.block_bytes && mine[first] == theirs[first]) ++first;
                if (first == layout.block_bytes) continue;
                if (++differing <= 3) {
                    ADD_FAILURE() << type.name << ", " << mode << ": " << m.what << ", row " << r
                                  << (m.row_what.empty() ? "" : " (" + m.row_what[r] + ")")
                                  << ", block " << b << ": first differing byte " << first
                                  << "\n  verify: " << hex(mine.data(), layout.block_bytes)
                                  << "\n  ggml:   " << hex(theirs, layout.block_bytes);
                }
            }
        }
        ref_time += Clock::now() - start;
        values += m.values.size();
    }
    const auto ms = [](Clock::duration d) {
        return std::chrono::duration<double, std::milli>(d).count();
    };
    std::printf(
        "[ ref-quant ] %-6s %-13s %8llu values, %6llu blocks: verify %.0f ms, ggml %.0f ms\n",
        type.name, mode, static_cast<unsigned long long>(values),
        static_cast<unsigned long long>(blocks), ms(ref_time), ms(ggml_time));
    EXPECT_EQ(differing, 0u) << type.name << ", " << mode << ": " << differing << " of " << blocks
                             << " blocks differ from ggml_quantize_chunk";
}

INSTANTIATE_TEST_SUITE_P(AllTypes, RefQuantizeOracle,
                         ::testing::Combine(::testing::ValuesIn(kTypes), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<TypeCase, bool>>& info) {
                             return std::string(std::get<0>(info.param).name) +
                                    (std::get<1>(info.param) ? "_importance" : "_plain");
                         });

}  // namespace
}  // namespace rebox::verify_ref
