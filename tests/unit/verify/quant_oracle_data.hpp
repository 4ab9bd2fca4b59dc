// Inputs for the re-quantizer oracle tests: generated matrices (widths 256..8192; normal,
// heavy-tailed, uniform and offset values; rounded to the bf16 or f16 grid or left f32) and one
// matrix of adversarial rows (zeros, constants, one outlier, subnormals, ties, 1e30, 1e-30, ...),
// each with an importance vector in the importance mode (zero columns, and an all-zero one).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rebox::test {

struct QuantMatrix {
    std::string what;  // how it was made, for failure messages
    int64_t rows = 0;
    int64_t width = 0;
    std::vector<float> values;          // rows * width
    std::vector<float> importance;      // width, or empty
    std::vector<std::string> row_what;  // per row of the adversarial matrix, else empty
};

// Matrices totalling at least `target_values` values, deterministic in `seed`; widths are
// multiples of `block_values`; importance vectors when `with_importance`. The adversarial
// matrices come first.
std::vector<QuantMatrix> quant_oracle_matrices(uint32_t block_values, bool with_importance,
                                               uint64_t target_values, uint64_t seed);

// REBOX_QUANT_TEST_VALUES when set (a count), else `fallback`.
uint64_t quant_test_values(uint64_t fallback);

}  // namespace rebox::test
