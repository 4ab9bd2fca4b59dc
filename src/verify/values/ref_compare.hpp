// Bit-pattern comparison of expected vs read-back values: any difference in the 32-bit pattern is a
// mismatch (so -0.0 vs 0.0 and NaN payloads count); the error size is the float difference.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

namespace rebox::verify_ref {

struct CompareResult {
    uint64_t mismatches = 0;
    uint64_t first_diff = std::numeric_limits<uint64_t>::max();  // lowest differing index
    uint32_t expected_bits = 0;                                  // at first_diff
    uint32_t got_bits = 0;
    double max_abs_error = 0.0;  // infinity when a NaN or infinity is involved
    // GPTQ / AWQ / compressed-tensors sources: the lowest index whose fp64 (q - z) * s is not a
    // binary32 value (then the proof does not hold whatever the GGUF holds), and that value.
    uint64_t source_inexact_index = std::numeric_limits<uint64_t>::max();
    double source_inexact_value = 0.0;
    // Folds another (disjoint) range's result in; the lowest first_diff wins.
    void merge(const CompareResult& other);
};

// Compares values first_index .. first_index+expected.size()-1 (got has the same size).
void compare_values(std::span<const float> expected, std::span<const float> got,
                    uint64_t first_index, CompareResult& result);

}  // namespace rebox::verify_ref
