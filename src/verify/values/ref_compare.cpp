// Bit-pattern comparison loop and the merge of per-chunk results.
#include "verify/values/ref_compare.hpp"

#include <cmath>

#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {

void CompareResult::merge(const CompareResult& other) {
    mismatches += other.mismatches;
    if (other.mismatches > 0 && other.first_diff < first_diff) {
        first_diff = other.first_diff;
        expected_bits = other.expected_bits;
        got_bits = other.got_bits;
    }
    if (other.source_inexact_index < source_inexact_index) {
        source_inexact_index = other.source_inexact_index;
        source_inexact_value = other.source_inexact_value;
    }
    if (other.max_abs_error > max_abs_error || std::isnan(other.max_abs_error))
        max_abs_error = std::isnan(other.max_abs_error) ? INFINITY : other.max_abs_error;
}

void compare_values(std::span<const float> expected, std::span<const float> got,
                    uint64_t first_index, CompareResult& result) {
    for (size_t i = 0; i < expected.size(); ++i) {
        const uint32_t want = float_bits(expected[i]);
        const uint32_t have = float_bits(got[i]);
        if (want == have) continue;
        if (result.mismatches == 0 || first_index + i < result.first_diff) {
            result.first_diff = first_index + i;
            result.expected_bits = want;
            result.got_bits = have;
        }
        ++result.mismatches;
        double error = std::fabs(static_cast<double>(expected[i]) - static_cast<double>(got[i]));
        if (std::isnan(error)) error = INFINITY;
        if (error > result.max_abs_error) result.max_abs_error = error;
    }
}

}  // namespace rebox::verify_ref
