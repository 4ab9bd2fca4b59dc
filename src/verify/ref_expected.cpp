// Source-side expected values (mcq-v1 / MLX affine formula, float widening); plain loops on spans.
// Per group the scale and min are widened once and the inner loop over the group's codes is a
// plain (vectorisable) multiply-add over restrict pointers.
#include "ref_expected.hpp"

#include <algorithm>

#include "ref_lsb0.hpp"

namespace rebox::verify_ref {
namespace {

// Value `index` of a little-endian parameter array, widened exactly to binary32.
float param_at(SourceFloat dtype, std::span<const uint8_t> values, uint64_t index) {
    switch (dtype) {
        case SourceFloat::F32:
            return float_from_bits(load_u32le(&values[4 * index]));
        case SourceFloat::BF16:
            return bf16_bits_to_float(load_u16le(&values[2 * index]));
        case SourceFloat::F16:
            break;
    }
    return half_bits_to_float(load_u16le(&values[2 * index]));
}

}  // namespace

void expected_from_quantized(const QuantizedSource& source, uint64_t first,
                             std::span<uint8_t> codes, std::span<float> out) {
    const std::span<uint8_t> chunk_codes = codes.first(out.size());
    extract_lsb0_codes(source.qcodes, source.bits, first, chunk_codes);
    uint64_t index = first;
    size_t k = 0;
    while (k < out.size()) {
        const uint64_t group_index = index / source.group;
        const uint64_t group_end = (group_index + 1) * source.group;
        const size_t run = static_cast<size_t>(
            std::min<uint64_t>(group_end - index, static_cast<uint64_t>(out.size() - k)));
        const float scale = param_at(source.param_dtype, source.scales, group_index);
        const float min = param_at(source.param_dtype, source.mins, group_index);
        const uint8_t* __restrict run_codes = chunk_codes.data() + k;
        float* __restrict run_out = out.data() + k;
        for (size_t r = 0; r < run; ++r) run_out[r] = mcq_value(run_codes[r], scale, min);
        k += run;
        index += run;
    }
}

void expected_from_float(SourceFloat dtype, std::span<const uint8_t> data, uint64_t first,
                         std::span<float> out) {
    switch (dtype) {
        case SourceFloat::F32:
            for (size_t i = 0; i < out.size(); ++i)
                out[i] = float_from_bits(load_u32le(&data[4 * (first + i)]));
            break;
        case SourceFloat::F16:
            for (size_t i = 0; i < out.size(); ++i)
                out[i] = half_bits_to_float(load_u16le(&data[2 * (first + i)]));
            break;
        case SourceFloat::BF16:
            for (size_t i = 0; i < out.size(); ++i)
                out[i] = bf16_bits_to_float(load_u16le(&data[2 * (first + i)]));
            break;
    }
}

}  // namespace rebox::verify_ref
