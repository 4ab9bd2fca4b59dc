// Source-side expected values (mcq-v1 / MLX affine formula, float widening); plain loops on spans.
// Per group the scale and min are widened once and the group's codes go through verify's
// scale_codes kernel (scalar, SSE2 or AVX2: the same multiply, then add).
#include "ref_expected.hpp"

#include <algorithm>

#include "ref_kernels.hpp"
#include "ref_lsb0.hpp"

namespace rebox::verify_ref {
namespace {

// Value `index` of a little-endian parameter array, widened exactly to binary32.
template <SourceFloat Dtype>
inline float param_at(std::span<const uint8_t> values, uint64_t index) {
    if constexpr (Dtype == SourceFloat::F32)
        return float_from_bits(load_u32le(&values[4 * index]));
    else if constexpr (Dtype == SourceFloat::BF16)
        return bf16_bits_to_float(load_u16le(&values[2 * index]));
    else
        return half_bits_to_float(load_u16le(&values[2 * index]));
}

// The group loop for one parameter type (a constant, so each group's scale and min load inline).
template <SourceFloat Dtype>
void scale_codes(const QuantView& source, uint64_t first, const uint8_t* codes,
                 std::span<float> out) {
    const auto scale_run = kernels().scale_codes;  // looked up once per call, not per group
    uint64_t index = first;
    size_t k = 0;
    while (k < out.size()) {
        const uint64_t group_index = index / source.group;
        const uint64_t group_end = (group_index + 1) * source.group;
        const size_t run = static_cast<size_t>(
            std::min<uint64_t>(group_end - index, static_cast<uint64_t>(out.size() - k)));
        const float scale = param_at<Dtype>(source.scales, group_index);
        const float min = param_at<Dtype>(source.mins, group_index);
        // mcq_value(code, scale, min) for each code of the run, in verify's kernel path.
        scale_run(codes + k, run, scale, min, out.data() + k);
        k += run;
        index += run;
    }
}

}  // namespace

void expected_from_quantized(const QuantView& source, uint64_t first, std::span<uint8_t> codes,
                             std::span<float> out) {
    const std::span<uint8_t> chunk_codes = codes.first(out.size());
    extract_lsb0_codes(source.qcodes, source.bits, first, chunk_codes);
    switch (source.param_dtype) {
        case SourceFloat::F16:
            return scale_codes<SourceFloat::F16>(source, first, chunk_codes.data(), out);
        case SourceFloat::BF16:
            return scale_codes<SourceFloat::BF16>(source, first, chunk_codes.data(), out);
        case SourceFloat::F32:
            return scale_codes<SourceFloat::F32>(source, first, chunk_codes.data(), out);
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
