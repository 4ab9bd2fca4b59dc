// The V-head reorder and -exp of linear-attention layers as verify reads them
// (ref_linear_attention.hpp).
#include "verify/values/ref_linear_attention.hpp"

#include <cmath>

#include "verify/values/ref_norm_shift.hpp"

namespace rebox::verify_ref {

uint64_t v_head_source_row(uint64_t row, uint64_t first, uint64_t k_heads, uint64_t v_heads,
                           uint64_t unit) {
    if (row < first || k_heads == 0 || unit == 0) return row;
    const uint64_t head = (row - first) / unit, within = (row - first) % unit;
    const uint64_t key_head = head % k_heads, nth_of_key = head / k_heads;
    return first + (key_head * (v_heads / k_heads) + nth_of_key) * unit + within;
}

uint64_t v_head_source_column(uint64_t column, uint64_t k_heads, uint64_t v_heads,
                              uint64_t head_v_dim) {
    return v_head_source_row(column, 0, k_heads, v_heads, head_v_dim);
}

void neg_exp_as_converter(SourceFloat dtype, std::span<float> values) {
    for (float& v : values) {
        const double e = std::exp(static_cast<double>(v));
        v = dtype == SourceFloat::F16 ? static_cast<float>(-round_to_fp16(e))
                                      : -static_cast<float>(e);
    }
}

}  // namespace rebox::verify_ref
