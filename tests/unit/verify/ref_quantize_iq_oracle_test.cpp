// verify's own re-quantizer and dequantizer for the lattice i-quants (IQ1_S, IQ1_M, IQ2_XXS,
// IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S; verify/quantized/ref_quantize_iq.cpp, ref_dequant_lossy.cpp)
// against llama.cpp's own libggml-base.so: every block ggml_quantize_chunk writes, byte for byte,
// with an importance matrix and without one where ggml allows it, on generated rows and the
// adversarial ones (zeros, constants, one outlier per 32, subnormals, rounding ties, all-negative,
// zero sub-blocks between normal ones, magnitudes 1e-30 and 1e-6..1e6) under imatrices of ones,
// zeros, half zeros and log-normal weights; ggml_quantize_requires_imatrix's answer is verify's,
// and the GGUF values verify decodes are ggml's dequantize_row_* floats. A few blocks per case: the
// i-quant searches are ~100x slower than a K-quant's, in ggml and in verify.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "quantize/quant_test_data.hpp"
#include "verify/quantized/quant_check.hpp"
#include "verify/quantized/ref_dequant_lossy.hpp"
#include "verify/quantized/ref_quantize.hpp"

namespace rebox::verify_ref {
namespace iq_oracle_test {

struct IqType {
    uint32_t id;
    const char* name;
    bool needs_importance;  // ggml_quantize_requires_imatrix (checked against ggml below)
};

constexpr IqType kIqTypes[] = {{19, "IQ1_S", true},  {29, "IQ1_M", false}, {16, "IQ2_XXS", true},
                               {17, "IQ2_XS", true}, {22, "IQ2_S", false}, {18, "IQ3_XXS", false},
                               {21, "IQ3_S", false}};

std::string hex(const uint8_t* bytes, size_t count) {
    std::ostringstream out;
    char two[4];
    for (size_t i = 0; i < count; ++i) {
        std::snprintf(two, sizeof two, "%02x", bytes[i]);
        out << two;
    }
    return out.str();
}

struct Rows {
    std::string what;
    int64_t rows = 0;
    int64_t width = 0;
    std::vector<float> values;
    std::vector<float> importance;  // one row's worth, or empty
};

// Generated rows: normal values of a few scales and heavy-tailed ones with outliers, and a
// log-normal imatrix with some zero columns.
Rows generated_rows(uint32_t seed, bool with_importance) {
    Rows r;
    r.what = "generated";
    r.rows = 4;
    r.width = 1024;
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::student_t_distribution<float> heavy(3.f);
    r.values.resize(static_cast<size_t>(r.rows * r.width));
    for (int64_t row = 0; row < r.rows; ++row)
        for (int64_t i = 0; i < r.width; ++i)
            r.values[static_cast<size_t>(row * r.width + i)] =
                row % 2 ? 0.02f * heavy(rng) : std::ldexp(normal(rng), static_cast<int>(row) - 4);
    if (with_importance) {
        std::lognormal_distribution<float> weights(0.f, 1.f);
        r.importance.resize(static_cast<size_t>(r.width));
        for (size_t i = 0; i < r.importance.size(); ++i)
            r.importance[i] = i % 37 == 5 ? 0.f : weights(rng);
    }
    return r;
}

// One 512-value row per adversarial pattern (quant_test_data.hpp), but the 1e30 rows, whose
// squares overflow: ggml aborts on them (no file holds such a block).
Rows adversarial_rows(uint32_t seed, int imatrix_variant) {
    Rows r;
    r.what = "adversarial, imatrix variant " + std::to_string(imatrix_variant);
    r.width = 512;
    std::mt19937 rng(seed);
    for (int pattern = 0; pattern < 12; ++pattern) {
        if (pattern == 7) continue;
        std::vector<float> row(static_cast<size_t>(r.width));
        test::detail::adversarial_row(pattern, rng, row.data(), r.width);
        r.values.insert(r.values.end(), row.begin(), row.end());
        ++r.rows;
    }
    if (imatrix_variant >= 0) {
        std::lognormal_distribution<float> weights(0.f, 1.f);
        r.importance.resize(static_cast<size_t>(r.width));
        for (size_t i = 0; i < r.importance.size(); ++i)
            r.importance[i] = imatrix_variant == 0   ? 1.f
                              : imatrix_variant == 1 ? 0.f
                              : imatrix_variant == 2 ? (i % 2 ? 0.f : weights(rng))
                                                     : weights(rng);
    }
    return r;
}

// verify's blocks against ggml's for every block of `r`; returns the blocks compared.
uint64_t expect_ggml_blocks(const IqType& type, const Rows& r) {
    RefQuantLayout layout{};
    EXPECT_TRUE(ref_quant_layout(type.id, &layout));
    const float* importance = r.importance.empty() ? nullptr : r.importance.data();
    const std::vector<uint8_t> expected = test::GgmlOracle::instance().quantize_rows(
        type.id, r.values.data(), r.rows, r.width, importance);
    const uint64_t per_row = static_cast<uint64_t>(r.width) / layout.block_values;
    EXPECT_EQ(expected.size(), r.rows * per_row * layout.block_bytes);
    std::vector<uint8_t> mine(layout.block_bytes);
    uint64_t blocks = 0, differing = 0;
    for (int64_t row = 0; row < r.rows; ++row) {
        const QuantRow quant_row = make_quant_row(
            type.id,
            std::span<const float>(r.values.data() + row * r.width, static_cast<size_t>(r.width)),
            r.importance);
        for (uint64_t b = 0; b < per_row; ++b, ++blocks) {
            ref_quantize_block(type.id, quant_row, b, mine);
            const uint8_t* theirs = expected.data() + (row * per_row + b) * layout.block_bytes;
            if (std::memcmp(mine.data(), theirs, layout.block_bytes) == 0) continue;
            if (++differing <= 3)
                ADD_FAILURE() << type.name << " " << r.what << (importance ? "" : ", no imatrix")
                              << ": row " << row << " block " << b
                              << "\n  verify: " << hex(mine.data(), layout.block_bytes)
                              << "\n  ggml:   " << hex(theirs, layout.block_bytes);
        }
    }
    EXPECT_EQ(differing, 0u) << type.name << ": " << differing << " of " << blocks << " blocks";
    return blocks;
}

// One case per grid: ggml builds a grid's neighbour tables on its first quantization of a type
// that uses it (seconds for the 1-bit and IQ2_S grids), once per process, and ctest runs each
// case in a process of its own.
struct GridFamily {
    const char* name;
    std::vector<IqType> types;
};

const GridFamily kFamilies[] = {{"IQ1", {kIqTypes[0], kIqTypes[1]}},
                                {"IQ2_XXS", {kIqTypes[2]}},
                                {"IQ2_XS", {kIqTypes[3]}},
                                {"IQ2_S", {kIqTypes[4]}},
                                {"IQ3", {kIqTypes[5], kIqTypes[6]}}};

class RefQuantizeIqOracle : public ::testing::TestWithParam<GridFamily> {};

TEST_P(RefQuantizeIqOracle, BlocksEqualGgmlWithAndWithoutImportance) {
    REBOX_REQUIRE_GGML_ORACLE();
    for (const IqType& type : GetParam().types) {
        uint64_t blocks = expect_ggml_blocks(type, generated_rows(type.id, true));
        for (int variant = 0; variant < 4; ++variant)
            blocks += expect_ggml_blocks(type, adversarial_rows(type.id * 7 + variant, variant));
        EXPECT_GT(blocks, 30u);
        if (!type.needs_importance) {
            expect_ggml_blocks(type, generated_rows(type.id + 100, false));
            expect_ggml_blocks(type, adversarial_rows(type.id + 200, -1));
            continue;
        }
        // No bytes to compare without one (ggml asserts): verify names the tensor and asks for
        // the imatrix.
        const std::vector<float> source(256, 0.5f);
        RefQuantLayout layout{};
        ASSERT_TRUE(ref_quant_layout(type.id, &layout));
        const std::vector<uint8_t> gguf(layout.block_bytes, 0);
        const QuantTensorInput in{"blk.0.ffn_down.weight", type.id, source, 256, {}, gguf, true};
        const QuantTensorCheck check = check_quantized_tensor(in);
        EXPECT_NE(check.problem.find("blk.0.ffn_down.weight: " + std::string(type.name) +
                                     " is quantized with an importance matrix only"),
                  std::string::npos)
            << check.problem;
        EXPECT_NE(check.problem.find("--imatrix"), std::string::npos) << check.problem;
    }
}

INSTANTIATE_TEST_SUITE_P(Grids, RefQuantizeIqOracle, ::testing::ValuesIn(kFamilies),
                         [](const ::testing::TestParamInfo<GridFamily>& info) {
                             return std::string(info.param.name);
                         });

// The floats verify reads back from a GGUF block (the RMSE and max error it reports) are ggml's
// dequantize_row_* floats, for random bytes and for the blocks of generated rows (verify's own
// blocks, which the case above finds equal to ggml_quantize_chunk's; ggml's would cost its
// neighbour tables again).
class RefDequantizeIqOracle : public ::testing::TestWithParam<IqType> {};

TEST_P(RefDequantizeIqOracle, ValuesEqualGgml) {
    REBOX_REQUIRE_GGML_ORACLE();
    const IqType type = GetParam();
    RefQuantLayout layout{};
    ASSERT_TRUE(ref_quant_layout(type.id, &layout));
    const Rows r = generated_rows(type.id + 300, true);
    std::vector<uint8_t> blocks;
    std::vector<uint8_t> block(layout.block_bytes);
    for (int64_t row = 0; row < r.rows; ++row) {
        const QuantRow quant_row = make_quant_row(
            type.id,
            std::span<const float>(r.values.data() + row * r.width, static_cast<size_t>(r.width)),
            r.importance);
        for (uint64_t b = 0; b < static_cast<uint64_t>(r.width) / 256; ++b) {
            ref_quantize_block(type.id, quant_row, b, block);
            blocks.insert(blocks.end(), block.begin(), block.end());
        }
    }
    std::mt19937 rng(type.id);
    for (int i = 0; i < 64 * static_cast<int>(layout.block_bytes); ++i)
        blocks.push_back(static_cast<uint8_t>(rng()));
    const size_t count = blocks.size() / layout.block_bytes;
    std::vector<float> theirs(count * 256), mine(256);
    ASSERT_TRUE(test::GgmlOracle::instance().dequantize(type.id, blocks.data(), theirs.data(),
                                                        static_cast<int64_t>(theirs.size())));
    uint64_t differing = 0;
    for (size_t b = 0; b < count; ++b) {
        ASSERT_TRUE(
            dequantize_lossy_block(type.id, blocks.data() + b * layout.block_bytes, mine.data()));
        for (int j = 0; j < 256; ++j) {
            const float t = theirs[b * 256 + static_cast<size_t>(j)];
            if (std::memcmp(&mine[static_cast<size_t>(j)], &t, sizeof t) != 0 && ++differing <= 3)
                ADD_FAILURE() << type.name << " block " << b << " value " << j << ": verify "
                              << mine[static_cast<size_t>(j)] << ", ggml " << t;
        }
    }
    EXPECT_EQ(differing, 0u);
}

INSTANTIATE_TEST_SUITE_P(LatticeTypes, RefDequantizeIqOracle, ::testing::ValuesIn(kIqTypes),
                         [](const ::testing::TestParamInfo<IqType>& info) {
                             return std::string(info.param.name);
                         });

// ggml_quantize_requires_imatrix's answer for each type id verify re-quantizes is verify's own.
TEST(RefQuantizeIqImportance, RequiredExactlyWhereGgmlRequiresIt) {
    REBOX_REQUIRE_GGML_ORACLE();
    void* handle =
        dlopen(test::GgmlOracle::library_path().c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (handle == nullptr)
        handle = dlopen(test::GgmlOracle::library_path().c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr);
    using Requires = bool (*)(int);
    const auto ggml_requires =
        reinterpret_cast<Requires>(dlsym(handle, "ggml_quantize_requires_imatrix"));
    ASSERT_NE(ggml_requires, nullptr);
    int checked = 0;
    for (uint32_t id = 0; id < 64; ++id) {
        if (ref_quant_type_name(id) == nullptr) continue;
        ++checked;
        EXPECT_EQ(ref_quant_requires_importance(id), ggml_requires(static_cast<int>(id)))
            << ref_quant_type_name(id);
    }
    EXPECT_EQ(checked, 25);
}

}  // namespace iq_oracle_test
}  // namespace rebox::verify_ref
