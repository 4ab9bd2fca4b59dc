// Generated inputs for the quantizer oracle tests: checkpoint-like tensors (normal, heavy-tailed
// with outliers, values on the bf16 and f16 grids) and adversarial rows (zeros, constants, a
// single outlier, subnormals, rounding ties, 1e30 and 1e-30 magnitudes, negative-only), plus
// imatrix vectors (positive, some zero, all zero). Deterministic for a given case number.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "format/half.hpp"

namespace rebox::test {

// REBOX_QUANT_TEST_VALUES (default 10^7): values per type and imatrix mode the oracle test
// compares; scripts/sanitize.sh sets 10^6.
inline int64_t quant_test_values() {
    const char* text = std::getenv("REBOX_QUANT_TEST_VALUES");
    if (text == nullptr || *text == '\0') return 10'000'000;
    return std::max<int64_t>(1, std::atoll(text));
}

struct QuantCase {
    std::string kind;  // what the rows hold, for failure messages
    int64_t nrows = 0;
    int64_t n_per_row = 0;
    std::vector<float> values;   // nrows x n_per_row
    std::vector<float> imatrix;  // n_per_row weights
};

inline constexpr int kQuantCaseKinds = 6;

namespace detail {

inline float to_bf16_grid(float f) { return bf16_to_float(float_to_bf16(f)); }
inline float to_f16_grid(float f) { return half_to_float(float_to_half(f)); }

// One adversarial row: pattern `p` over n values (every block of the row gets the pattern).
inline void adversarial_row(int p, std::mt19937& rng, float* row, int64_t n) {
    std::normal_distribution<float> normal(0.f, 1.f);
    std::uniform_int_distribution<int> small_int(-16, 16);
    switch (p % 12) {
        case 0:
            for (int64_t i = 0; i < n; ++i) row[i] = 0.f;
            break;
        case 1:
            for (int64_t i = 0; i < n; ++i) row[i] = 0.375f;
            break;
        case 2:
            for (int64_t i = 0; i < n; ++i) row[i] = -1.25f;
            break;
        case 3:  // a single outlier per 32 values in a small-noise row
            for (int64_t i = 0; i < n; ++i) row[i] = (i % 32 == 7) ? 40.f : 0.01f * normal(rng);
            break;
        case 4:  // subnormals
            for (int64_t i = 0; i < n; ++i) row[i] = 1e-39f * normal(rng);
            break;
        case 5:  // exact multiples of 1/2 and 1/4: codes land on rounding ties
            for (int64_t i = 0; i < n; ++i) row[i] = 0.5f * static_cast<float>(small_int(rng));
            break;
        case 6:
            for (int64_t i = 0; i < n; ++i)
                row[i] = 0.25f * static_cast<float>(small_int(rng)) - 0.125f;
            break;
        case 7:
            for (int64_t i = 0; i < n; ++i) row[i] = 1e30f * normal(rng);
            break;
        case 8:
            for (int64_t i = 0; i < n; ++i) row[i] = 1e-30f * normal(rng);
            break;
        case 9:
            for (int64_t i = 0; i < n; ++i) row[i] = -std::fabs(normal(rng));
            break;
        case 10:  // zero blocks between normal ones, and one sub-block of 16 zeros
            for (int64_t i = 0; i < n; ++i) {
                row[i] = ((i / 32) % 3 == 1 || (i % 256) < 16) ? 0.f : normal(rng);
            }
            break;
        default:  // block magnitudes spanning 1e-6 .. 1e6
            for (int64_t i = 0; i < n; ++i) {
                const float scale = std::pow(10.f, static_cast<float>((i / 32) % 13) - 6.f);
                row[i] = scale * normal(rng);
            }
            break;
    }
}

}  // namespace detail

// Case `index`: the kind cycles through kQuantCaseKinds, the width through 256..8192.
inline QuantCase make_quant_case(int index, int64_t max_values = 1 << 16) {
    static constexpr int64_t kWidths[] = {256, 512, 768, 1024, 2048, 3072, 4096, 5120, 8192};
    std::mt19937 rng(static_cast<uint32_t>(0x9e3779b9u * static_cast<uint32_t>(index + 1)));
    std::normal_distribution<float> normal(0.f, 1.f);
    std::student_t_distribution<float> student(3.f);
    QuantCase c;
    c.n_per_row = kWidths[(index * 5 + index / kQuantCaseKinds) % 9];
    c.nrows = std::max<int64_t>(1, std::min<int64_t>(64, max_values / c.n_per_row));
    c.values.resize(static_cast<size_t>(c.nrows * c.n_per_row));
    const int kind = index % kQuantCaseKinds;
    const float sigma = 0.02f * std::pow(2.f, static_cast<float>(index % 7) - 3.f);
    for (int64_t r = 0; r < c.nrows; ++r) {
        float* row = c.values.data() + r * c.n_per_row;
        for (int64_t i = 0; i < c.n_per_row; ++i) {
            float v = 0;
            switch (kind) {
                case 0:
                    v = sigma * normal(rng);
                    break;
                case 1:
                    v = sigma * student(rng) * (i % 97 == 13 ? 50.f : 1.f);
                    break;
                case 2:
                    v = detail::to_bf16_grid(sigma * student(rng));
                    break;
                case 3:
                    v = detail::to_f16_grid(sigma * normal(rng));
                    break;
                default:
                    break;
            }
            row[i] = v;
        }
        if (kind == 4) detail::adversarial_row(static_cast<int>(r), rng, row, c.n_per_row);
        if (kind == 5) detail::adversarial_row(static_cast<int>(r + index), rng, row, c.n_per_row);
    }
    static const char* kKinds[] = {"normal",   "student-t+outliers", "bf16-grid",
                                   "f16-grid", "adversarial",        "adversarial-shifted"};
    c.kind = kKinds[kind];
    // imatrix: positive (log-normal), with zero columns; every 5th case all zeros, every 7th
    // all ones.
    c.imatrix.resize(static_cast<size_t>(c.n_per_row));
    for (int64_t i = 0; i < c.n_per_row; ++i) {
        float w = std::exp(normal(rng));
        if (i % 61 == 3) w = 0.f;
        if (index % 5 == 4) w = 0.f;
        if (index % 7 == 6) w = 1.f;
        c.imatrix[static_cast<size_t>(i)] = w;
    }
    return c;
}

}  // namespace rebox::test
