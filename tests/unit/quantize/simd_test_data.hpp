// Inputs of the lane-kernel tests and benchmarks: checkpoint-like rows (normal and heavy-tailed
// values with outliers, rounded to the bf16 or f16 grid), importance matrices (with zero columns)
// and the adversarial rows ggml's searches are most sensitive to.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "format/half.hpp"

namespace rebox::test {

enum class ValueGrid { f32, bf16, f16 };

inline float on_grid(float v, ValueGrid grid) {
    switch (grid) {
        case ValueGrid::bf16:
            return bf16_to_float(float_to_bf16(v));
        case ValueGrid::f16:
            return half_to_float(float_to_half(v));
        case ValueGrid::f32:
            break;
    }
    return v;
}

// nrows x n_per_row values: normal(0, 0.02) or student-t(3)*0.02 with ~1/500 outliers x50.
inline std::vector<float> checkpoint_rows(int64_t nrows, int64_t n_per_row, bool heavy_tailed,
                                          ValueGrid grid, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.f, 0.02f);
    std::student_t_distribution<float> student(3.f);
    std::uniform_int_distribution<int> outlier(0, 499);
    std::vector<float> values(static_cast<size_t>(nrows * n_per_row));
    for (auto& v : values) {
        float x = heavy_tailed ? 0.02f * student(rng) : normal(rng);
        if (outlier(rng) == 0) x *= 50.f;
        v = on_grid(x, grid);
    }
    return values;
}

// One weight per column: gamma-like positive values, every 37th column 0.
inline std::vector<float> importance_matrix(int64_t n_per_row, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::gamma_distribution<float> gamma(0.7f, 2.f);
    std::vector<float> w(static_cast<size_t>(n_per_row));
    for (int64_t j = 0; j < n_per_row; ++j) w[j] = j % 37 == 5 ? 0.f : gamma(rng);
    return w;
}

struct AdversarialRow {
    std::string name;
    std::vector<float> values;
};

// Rows of `width` values (a multiple of 256) that hit the corners of the searches.
inline std::vector<AdversarialRow> adversarial_rows(int64_t width) {
    const auto n = static_cast<size_t>(width);
    std::vector<AdversarialRow> rows;
    auto add = [&](std::string name, auto&& value_at) {
        AdversarialRow row{std::move(name), std::vector<float>(n)};
        for (size_t i = 0; i < n; ++i) row.values[i] = value_at(i);
        rows.push_back(std::move(row));
    };
    std::mt19937_64 rng(99);
    std::normal_distribution<float> normal(0.f, 1.f);
    add("zeros", [](size_t) { return 0.f; });
    add("negative zeros", [](size_t) { return -0.f; });
    add("constant", [](size_t) { return 0.75f; });
    add("negative constant", [](size_t) { return -0.0312f; });
    add("one outlier",
        [](size_t i) { return i == 77 ? 40.f : 0.001f * static_cast<float>(i % 7); });
    add("negative outlier",
        [](size_t i) { return i % 256 == 200 ? -60.f : 0.01f * static_cast<float>(i % 3); });
    add("subnormals", [&](size_t) { return 1e-40f * normal(rng); });
    add("min subnormal",
        [](size_t i) { return i % 2 ? std::numeric_limits<float>::denorm_min() : 0.f; });
    add("halves grid (rounding ties)",
        [](size_t i) { return 0.5f * static_cast<float>(static_cast<int>(i % 33) - 16); });
    add("quarter ties",
        [](size_t i) { return 0.25f * static_cast<float>(static_cast<int>(i % 63) - 31); });
    add("huge 1e30", [&](size_t) { return 1e30f * normal(rng); });
    add("tiny 1e-30", [&](size_t) { return 1e-30f * normal(rng); });
    add("negative only", [&](size_t) { return -std::fabs(normal(rng)) - 0.001f; });
    add("positive only", [&](size_t) { return std::fabs(normal(rng)) + 0.5f; });
    add("equal magnitudes +-", [](size_t i) { return i % 2 ? 3.f : -3.f; });
    add("first max negative",
        [](size_t i) { return i % 32 == 3 ? -2.f : (i % 32 == 9 ? 2.f : 0.1f); });
    add("signed zeros, -0 first",
        [](size_t i) { return i % 3 == 0 ? -0.f : (i % 3 == 1 ? 0.f : 0.5f); });
    add("signed zeros, +0 first",
        [](size_t i) { return i % 3 == 0 ? 0.f : (i % 3 == 1 ? -0.f : -0.5f); });
    // Per 32-value block: a zero of each sign at places that move from block to block, the
    // block's other values all positive (even blocks: the min is a zero) or all negative (odd
    // blocks: the max is); ggml keeps the first of the two zeros.
    add("signed zeros moving within blocks", [](size_t i) {
        const size_t b = i / 32, j = i % 32;
        const bool minus_first = b % 4 < 2;
        if (j == b % 32) return minus_first ? -0.f : 0.f;
        if (j == (b * 7 + 3) % 32 && b % 32 != (b * 7 + 3) % 32) return minus_first ? 0.f : -0.f;
        const float v = 0.25f + 0.1f * static_cast<float>(j % 5);
        return b % 2 ? -v : v;
    });
    add("two levels", [](size_t i) { return i % 5 ? 1.f : 0.f; });
    add("sparse", [&](size_t i) { return i % 17 == 0 ? normal(rng) : 0.f; });
    add("fp16 limits",
        [&](size_t i) { return i % 3 == 0 ? 65504.f : (i % 3 == 1 ? -6.1e-5f : 6e-8f); });
    add("staircase", [](size_t i) { return static_cast<float>(i % 256) / 255.f; });
    return rows;
}

// Imatrices for the adversarial rows: the ordinary one, and one that is zero on whole blocks.
inline std::vector<float> blockwise_zero_imatrix(int64_t n_per_row) {
    std::vector<float> w = importance_matrix(n_per_row, 5);
    for (int64_t j = 0; j < n_per_row; ++j)
        if ((j / 32) % 3 == 1) w[j] = 0.f;
    return w;
}

}  // namespace rebox::test
