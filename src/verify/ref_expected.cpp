// Source-side expected values (mcq-v1 formula, float widening); plain loops on spans.
#include "ref_expected.hpp"

#include <algorithm>

#include "ref_lsb0.hpp"

namespace rebox::verify_ref {

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
        const float scale = half_bits_to_float(load_u16le(&source.scales[2 * group_index]));
        const float min = half_bits_to_float(load_u16le(&source.mins[2 * group_index]));
        for (size_t r = 0; r < run; ++r) out[k + r] = mcq_value(chunk_codes[k + r], scale, min);
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
