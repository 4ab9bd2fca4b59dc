// The i-quants against llama.cpp's own ggml (libggml-base.so): every grid point of the embedded
// grid data decodes in ggml's dequantizers to the values the data says; rebox's quantizers give
// ggml_quantize_chunk's bytes with an imatrix on generated and adversarial rows (zeros, constants,
// outliers, ties, subnormals, imatrix zeros); the types ggml_quantize_requires_imatrix names are
// refused without one; and rebox's dequantizers give ggml's floats.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ggml_oracle.hpp"
#include "oracle_required.hpp"
#include "quant_test_data.hpp"
#include "quantize/iq_grid_data.hpp"
#include "quantize/quantize.hpp"
#include "rebox/error.hpp"
#include "rebox/rebox.hpp"

namespace rebox {
namespace iquant_oracle {

using test::GgmlOracle;
using test::QuantCase;

// REBOX_IQUANT_TEST_VALUES (default 2^16): values per type the byte comparison covers; the
// search is ~100x slower than a K-quant's, in ggml and here.
int64_t iquant_test_values() {
    const char* text = std::getenv("REBOX_IQUANT_TEST_VALUES");
    if (text == nullptr || *text == '\0') return int64_t{1} << 16;
    return std::max<int64_t>(1, std::atoll(text));
}

std::vector<float> ggml_floats(GgmlType type, const std::vector<uint8_t>& blocks, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    const auto row = GgmlOracle::instance().dequantizer(type);
    EXPECT_NE(row, nullptr) << ggml_type_name(type);
    if (row != nullptr) row(blocks.data(), out.data(), n);
    return out;
}

// One super-block per grid point, d = 1 (fp16 0x3c00), every scale code and sign bit 0, the point
// at index g in the first slot: the first `values` floats ggml decodes must be db * m(l_i) for
// the codes l_i the embedded data gives, with ggml-common.h's grids: IQ2 m = {8, 25, 43}[l]
// (db = 0.125), IQ1_S / IQ1_M m = l - 1 + 0.125 (db = 1), IQ3_XXS m = {4, 12, ..., 52, 62}[l] (8l +
// 4 but 62 for l = 7; db = 0.25), IQ3_S m = 2l + 1 (db = 1).
struct GridCase {
    GgmlType type;
    const uint16_t* data;
    int points;
    int values;  // codes per point
    int bits;    // bits per code in the data
    float db;
};

float grid_magnitude(GgmlType type, int l) {
    if (type == GgmlType::IQ2_XXS || type == GgmlType::IQ2_XS || type == GgmlType::IQ2_S) {
        constexpr float kIq2[4] = {8.f, 25.f, 43.f, -1.f};
        return kIq2[l];
    }
    if (type == GgmlType::IQ1_S || type == GgmlType::IQ1_M)
        return static_cast<float>(l - 1) + 0.125f;
    if (type == GgmlType::IQ3_XXS) {
        constexpr float kIq3Xxs[8] = {4.f, 12.f, 20.f, 28.f, 36.f, 44.f, 52.f, 62.f};
        return kIq3Xxs[l];
    }
    return static_cast<float>(2 * l + 1);
}

void place_point(GgmlType type, int g, uint8_t* block) {
    block[1] = 0x3c;
    switch (type) {
        case GgmlType::IQ2_XXS:
        case GgmlType::IQ3_XXS:
            block[2] = static_cast<uint8_t>(g);
            break;
        case GgmlType::IQ2_XS:
            block[2] = static_cast<uint8_t>(g & 0xff);
            block[3] = static_cast<uint8_t>(g >> 8);
            break;
        case GgmlType::IQ1_S:  // qs[0] and bits 0..2 of qh[0] (uint16 at byte 34)
            block[2] = static_cast<uint8_t>(g & 0xff);
            block[34] = static_cast<uint8_t>(g >> 8);
            break;
        case GgmlType::IQ1_M:  // no d: the fp16 1.0 (0x3c00) in the scales' top nibbles
            block[1] = 0;
            block[0] = static_cast<uint8_t>(g & 0xff);
            block[32] = static_cast<uint8_t>(g >> 8);
            block[48 + 5] = 0xc0;  // sc[2] |= 0xc << 12
            block[48 + 7] = 0x30;  // sc[3] |= 0x3 << 12
            break;
        case GgmlType::IQ2_S:  // qs[0] and bits 0..1 of qh[0]
            block[2] = static_cast<uint8_t>(g & 0xff);
            block[66] = static_cast<uint8_t>(g >> 8);
            break;
        default:  // IQ3_S: qs[0] and bit 0 of qh[0]
            block[2] = static_cast<uint8_t>(g & 0xff);
            block[66] = static_cast<uint8_t>(g >> 8);
            break;
    }
}

TEST(IquantGridData, EveryGridPointDecodesInGgmlAsTheDataSays) {
    REBOX_REQUIRE_GGML_ORACLE();
    using namespace iq_grid_data;
    const GridCase cases[] = {{GgmlType::IQ1_S, kIq1Grid, 2048, 8, 2, 1.f},
                              {GgmlType::IQ1_M, kIq1Grid, 2048, 8, 2, 1.f},
                              {GgmlType::IQ2_XXS, kIq2GridXxs, 256, 8, 2, 0.125f},
                              {GgmlType::IQ2_XS, kIq2GridXs, 512, 8, 2, 0.125f},
                              {GgmlType::IQ2_S, kIq2GridS, 1024, 8, 2, 0.125f},
                              {GgmlType::IQ3_XXS, kIq3GridXxs, 256, 4, 3, 0.25f},
                              {GgmlType::IQ3_S, kIq3GridS, 512, 4, 3, 1.f}};
    for (const GridCase& gc : cases) {
        const size_t type_size = ggml_type_traits(gc.type)->type_size;
        std::vector<uint8_t> blocks(static_cast<size_t>(gc.points) * type_size, 0);
        for (int g = 0; g < gc.points; ++g)
            place_point(gc.type, g, blocks.data() + type_size * static_cast<size_t>(g));
        const auto floats = ggml_floats(gc.type, blocks, int64_t{gc.points} * 256);
        for (int g = 0; g < gc.points; ++g) {
            for (int j = 0; j < gc.values; ++j) {
                const int l = (gc.data[g] >> (gc.bits * j)) & ((1 << gc.bits) - 1);
                ASSERT_EQ(floats[static_cast<size_t>(256 * g + j)],
                          gc.db * grid_magnitude(gc.type, l))
                    << ggml_type_name(gc.type) << " grid point " << g << " value " << j;
            }
        }
    }
}

const GgmlType kTypes[] = {GgmlType::IQ1_S, GgmlType::IQ1_M,   GgmlType::IQ2_XXS, GgmlType::IQ2_XS,
                           GgmlType::IQ2_S, GgmlType::IQ3_XXS, GgmlType::IQ3_S};

class IquantOracle : public ::testing::TestWithParam<GgmlType> {};

std::string hex(const uint8_t* p, size_t n) {
    std::string out;
    char buf[4];
    for (size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", p[i]);
        out += buf;
    }
    return out;
}

// ggml_quantize_chunk in a child process: ggml aborts (GGML_ASSERT) on some inputs, where the
// search meets a NaN; nullopt then. The bytes come back through a shared mapping.
// ggml builds its grid tables on a type's first quantization; done once here in this process
// (on a row that does not abort), so each child does not build them again.
void warm_up_ggml(GgmlType type) {
    static bool warm[kGgmlTypeCount] = {};
    if (warm[ggml_type_id(type)]) return;
    warm[ggml_type_id(type)] = true;
    std::vector<float> row(256), ones(256, 1.f);
    for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(i % 7) - 3.f;
    std::vector<uint8_t> out(ggml_type_traits(type)->type_size);
    GgmlOracle::instance().quantize(type, row.data(), out.data(), 1, 256, ones.data());
}

std::optional<std::vector<uint8_t>> ggml_bytes_or_abort(GgmlType type, const QuantCase& c,
                                                        const float* imatrix, size_t bytes) {
    warm_up_ggml(type);
    void* shared = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        ADD_FAILURE() << "mmap failed";
        return std::nullopt;
    }
    std::fflush(nullptr);
    const pid_t child = fork();
    if (child == 0) {
        setenv("GGML_NO_BACKTRACE", "1", 1);
        const int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDERR_FILENO);
        }
        const size_t written = GgmlOracle::instance().quantize(type, c.values.data(), shared,
                                                               c.nrows, c.n_per_row, imatrix);
        _exit(written == bytes ? 0 : 3);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::optional<std::vector<uint8_t>> out;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        const auto* p = static_cast<const uint8_t*>(shared);
        out.emplace(p, p + bytes);
    } else if (WIFEXITED(status)) {
        ADD_FAILURE() << "ggml_quantize_chunk wrote a different size";
    }
    munmap(shared, bytes);
    return out;
}

// ggml's bytes for rows [r0, r0 + nrows) of a case and an imatrix (null or not) against
// rebox's; false when ggml aborts on them (nothing compared).
bool compare_rows(GgmlType type, const QuantCase& c, int64_t r0, int64_t nrows,
                  const float* imatrix, const std::string& what) {
    const GgmlTypeTraits traits = *ggml_type_traits(type);
    const size_t row_size = static_cast<size_t>(c.n_per_row / traits.block_size) * traits.type_size;
    QuantCase part;
    part.kind = c.kind;
    part.nrows = nrows;
    part.n_per_row = c.n_per_row;
    part.values.assign(c.values.begin() + r0 * c.n_per_row,
                       c.values.begin() + (r0 + nrows) * c.n_per_row);
    const size_t bytes = row_size * static_cast<size_t>(nrows);
    const auto expected = ggml_bytes_or_abort(type, part, imatrix, bytes);
    if (!expected) return false;
    std::vector<uint8_t> ours(bytes, 0xa5);
    EXPECT_EQ(quantize_rows(type, part.values.data(), ours.data(), nrows, c.n_per_row, imatrix),
              bytes);
    const auto mismatch = std::mismatch(ours.begin(), ours.end(), expected->begin());
    if (mismatch.first == ours.end()) return true;
    const auto offset = static_cast<size_t>(mismatch.first - ours.begin());
    const size_t start = offset - offset % traits.type_size;
    ADD_FAILURE() << ggml_type_name(type) << " " << what << " " << c.kind << " " << c.nrows << "x"
                  << c.n_per_row << ": row " << r0 + static_cast<int64_t>(offset / row_size)
                  << " byte " << offset % row_size
                  << "\n  rebox: " << hex(ours.data() + start, traits.type_size)
                  << "\n  ggml:  " << hex(expected->data() + start, traits.type_size);
    return true;
}

// A whole case against ggml; when ggml aborts on it, row by row: each row gives ggml's bytes,
// or, where ggml aborts (a NaN met in the search: the 1e30 rows, whose squares overflow), rebox
// refuses the row with an Error. Returns the rows compared byte for byte.
int64_t expect_ggml_bytes(GgmlType type, const QuantCase& c, const float* imatrix,
                          const std::string& what) {
    if (compare_rows(type, c, 0, c.nrows, imatrix, what)) return c.nrows;
    int64_t compared = 0;
    for (int64_t r = 0; r < c.nrows; ++r) {
        if (compare_rows(type, c, r, 1, imatrix, what + " row " + std::to_string(r))) {
            ++compared;
            continue;
        }
        std::vector<uint8_t> out(ggml_type_traits(type)->type_size *
                                 static_cast<size_t>(c.n_per_row / 256));
        EXPECT_THROW(quantize_rows(type, c.values.data() + r * c.n_per_row, out.data(), 1,
                                   c.n_per_row, imatrix),
                     Error)
            << ggml_type_name(type) << " " << what << " row " << r << ": ggml aborts here";
    }
    return compared;
}

TEST_P(IquantOracle, BytesMatchGgmlWithImatrix) {
    REBOX_REQUIRE_GGML_ORACLE();
    const GgmlType type = GetParam();
    int64_t compared = 0;
    for (int index = 0; compared < iquant_test_values(); ++index) {
        const QuantCase c = test::make_quant_case(index, 1 << 14);
        expect_ggml_bytes(type, c, c.imatrix.data(), "case " + std::to_string(index));
        if (HasFatalFailure() || HasFailure()) return;
        compared += c.nrows * c.n_per_row;
    }
}

TEST_P(IquantOracle, BytesMatchGgmlWithoutImatrixWhereAllowed) {
    REBOX_REQUIRE_GGML_ORACLE();
    const GgmlType type = GetParam();
    if (quant::requires_imatrix(type)) GTEST_SKIP() << "refused without an imatrix (see below)";
    int64_t compared = 0;
    for (int index = 0; compared < iquant_test_values(); ++index) {
        const QuantCase c = test::make_quant_case(index, 1 << 14);
        expect_ggml_bytes(type, c, nullptr, "case " + std::to_string(index));
        if (HasFailure()) return;
        compared += c.nrows * c.n_per_row;
    }
}

// Adversarial rows (zeros, constants, one outlier per 32, subnormals, ties, tiny and negative
// values) with an imatrix of ones, of zeros and zero in every other column.
TEST_P(IquantOracle, AdversarialRowsAndImatrixZerosMatchGgml) {
    REBOX_REQUIRE_GGML_ORACLE();
    const GgmlType type = GetParam();
    for (int index : {4, 5, 10, 11}) {
        const QuantCase c = test::make_quant_case(index, 12 * 768);
        for (int variant = 0; variant < 3; ++variant) {
            std::vector<float> imatrix = c.imatrix;
            for (size_t i = 0; i < imatrix.size(); ++i)
                imatrix[i] = variant == 0 ? 1.f : variant == 1 ? 0.f : (i % 2 ? 0.f : imatrix[i]);
            const int64_t rows = expect_ggml_bytes(
                type, c, imatrix.data(),
                "case " + std::to_string(index) + " imatrix variant " + std::to_string(variant));
            if (HasFailure()) return;
            // Only the 1e30 rows may abort: every other pattern is compared byte for byte.
            EXPECT_GE(rows, c.nrows - (c.nrows + 11) / 12) << "case " << index;
        }
    }
}

// ggml_quantize_requires_imatrix's answer for every type id is rebox's, and those types are
// refused without an imatrix with llama-quantize's reason (ggml would abort).
TEST(IquantImatrix, RequiredWhereGgmlRequiresItAndRefusedWithout) {
    REBOX_REQUIRE_GGML_ORACLE();
    void* handle = dlopen(GgmlOracle::library_path().c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr);
    using Requires = bool (*)(int);
    const auto ggml_requires =
        reinterpret_cast<Requires>(dlsym(handle, "ggml_quantize_requires_imatrix"));
    ASSERT_NE(ggml_requires, nullptr);
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const auto type = static_cast<GgmlType>(id);
        if (!quant::is_quantized_type(type)) continue;
        EXPECT_EQ(quant::requires_imatrix(type), ggml_requires(static_cast<int>(id)))
            << ggml_type_name(type);
    }
    for (const GgmlType type : kTypes) {
        if (!quant::requires_imatrix(type)) continue;
        std::vector<float> row(256, 0.5f);
        std::vector<uint8_t> out(256);
        try {
            quantize_rows(type, row.data(), out.data(), 1, 256, nullptr);
            ADD_FAILURE() << ggml_type_name(type) << " quantized without an imatrix";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("requires an importance matrix"),
                      std::string::npos)
                << e.what();
        }
    }
}

// rebox's dequantizers give ggml's floats for random blocks and for blocks ggml quantized.
TEST_P(IquantOracle, DequantizerGivesGgmlsFloats) {
    REBOX_REQUIRE_GGML_ORACLE();
    const GgmlType type = GetParam();
    const GgmlTypeTraits traits = *ggml_type_traits(type);
    const int64_t n = 256 * 256;
    std::vector<uint8_t> blocks(static_cast<size_t>(n / 256) * traits.type_size);
    std::mt19937 rng(ggml_type_id(type));
    for (auto& b : blocks) b = static_cast<uint8_t>(rng());
    const QuantCase c = test::make_quant_case(3, 1 << 14);
    std::vector<uint8_t> quantized(static_cast<size_t>(c.nrows * c.n_per_row / 256) *
                                   traits.type_size);
    GgmlOracle::instance().quantize(type, c.values.data(), quantized.data(), c.nrows, c.n_per_row,
                                    c.imatrix.data());
    for (const auto* set : {&blocks, &quantized}) {
        const int64_t values = static_cast<int64_t>(set->size() / traits.type_size) * 256;
        const auto expected = ggml_floats(type, *set, values);
        std::vector<float> ours(static_cast<size_t>(values), 1234.5f);
        dequantize_row(type, set->data(), ours.data(), values);
        for (size_t i = 0; i < ours.size(); ++i)
            ASSERT_EQ(std::bit_cast<uint32_t>(ours[i]), std::bit_cast<uint32_t>(expected[i]))
                << ggml_type_name(type) << " value " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(IQuants, IquantOracle, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return ggml_type_name(info.param); });

}  // namespace iquant_oracle
}  // namespace rebox
