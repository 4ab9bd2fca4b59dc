// (q - z) * s per value for the GPTQ / AWQ / compressed-tensors layouts: codes and zero points
// come from prequant_unpack, scales are widened exactly to fp64, the product (exact in fp64: at
// most 9 + 24 significant bits) is rounded once to binary32 and checked to be that value.
#include "verify/sources/prequant_expected.hpp"

#include <cmath>

#include "verify/sources/prequant_unpack.hpp"

namespace rebox::verify_ref {
namespace {

int32_t load_i32(std::span<const uint8_t> bytes, uint64_t index) {
    return static_cast<int32_t>(load_u32le(bytes.data() + 4 * index));
}

uint64_t group_of(const PrequantSource& source, uint64_t k) {
    if (!source.g_idx.empty()) return static_cast<uint64_t>(load_i32(source.g_idx, k));
    return k / source.group;
}

}  // namespace

double prequant_scale(const PrequantSource& source, uint64_t g, uint64_t o) {
    // GPTQ / AWQ gemm scales are [groups, out]; compressed-tensors and AWQ gemv scales are
    // [out, scales_per_row].
    const bool by_group_row =
        source.layout == PrequantLayout::gptq || source.layout == PrequantLayout::awq_gemm;
    const uint64_t index = by_group_row ? g * source.out + o : o * source.scales_per_row + g;
    return stored_scale(source.scale_dtype, source.scales, index);
}

double stored_scale(SourceFloat dtype, std::span<const uint8_t> scales, uint64_t index) {
    switch (dtype) {
        case SourceFloat::F32:
            return float_from_bits(load_u32le(scales.data() + 4 * index));
        case SourceFloat::BF16:
            return bf16_bits_to_float(load_u16le(scales.data() + 2 * index));
        case SourceFloat::F16:
            break;
    }
    return half_bits_to_float(load_u16le(scales.data() + 2 * index));
}

namespace {

int64_t code_at(const PrequantSource& source, uint64_t o, uint64_t k) {
    switch (source.layout) {
        case PrequantLayout::gptq:
            return gptq_code(source.weight, source.out, source.bits, o, k);
        case PrequantLayout::awq_gemm:
            return awq_value(source.weight, source.out, k, o);
        case PrequantLayout::awq_gemv:  // row o: one 4-bit stream along the input dimension
            return stream_bits(source.weight, o * (source.in / 8), 1, k * 4, 4);
        case PrequantLayout::ct_packed:
            return ct_packed_code(source.weight, source.weight_words_per_row, source.bits, o, k);
        case PrequantLayout::ct_int8:
            return static_cast<int8_t>(source.weight[o * source.in + k]);
    }
    return 0;
}

int64_t zero_at(const PrequantSource& source, uint64_t g, uint64_t o) {
    switch (source.layout) {
        case PrequantLayout::gptq:
            return static_cast<int64_t>(gptq_stored_zero(source.zeros, source.zero_words_per_row,
                                                         source.bits, g, o)) +
                   source.zero_add;
        case PrequantLayout::awq_gemm:
            return awq_value(source.zeros, source.out, g, o);
        case PrequantLayout::awq_gemv:  // row o: one 4-bit stream over the groups
            return stream_bits(source.zeros, o * source.zero_words_per_row, 1, g * 4, 4);
        case PrequantLayout::ct_packed:
            // Stored codes and zero points both carry the +2^(bits-1) offset, which cancels in
            // q - z; without a zero point tensor the signed zero point is 0, i.e. z = offset.
            return source.zeros.empty()
                       ? int64_t{1} << (source.bits - 1)
                       : ct_packed_zero(source.zeros, source.groups, source.bits, g, o);
        case PrequantLayout::ct_int8:
            return source.zeros.empty() ? 0
                                        : static_cast<int8_t>(source.zeros[o * source.groups + g]);
    }
    return 0;
}

}  // namespace

PrequantParts prequant_parts(const PrequantSource& source, uint64_t o, uint64_t k) {
    PrequantParts parts;
    parts.g = group_of(source, k);
    parts.q = code_at(source, o, k);
    parts.z = zero_at(source, parts.g, o);
    return parts;
}

void expected_from_prequant(const PrequantSource& source, uint64_t first, std::span<float> out,
                            PrequantInexact& inexact) {
    // Zero point and scale are read again only when the (row, group) changes.
    uint64_t cached_o = std::numeric_limits<uint64_t>::max(), cached_g = 0;
    int64_t z = 0;
    double scale = 0.0;
    for (size_t i = 0; i < out.size(); ++i) {
        const uint64_t index = first + i;
        const uint64_t o = index / source.in, k = index % source.in;
        const uint64_t g = group_of(source, k);
        if (o != cached_o || g != cached_g) {
            cached_o = o, cached_g = g;
            z = zero_at(source, g, o);
            scale = prequant_scale(source, g, o);
        }
        const double value = static_cast<double>(code_at(source, o, k) - z) * scale;
        // A finite fp64 value beyond binary32's range becomes an infinity (a plain cast would be
        // undefined behaviour) and is reported like any other value that is not a binary32 value.
        out[i] = std::isfinite(value) && std::fabs(value) > std::numeric_limits<float>::max()
                     ? std::copysign(std::numeric_limits<float>::infinity(),
                                     static_cast<float>(value > 0 ? 1 : -1))
                     : static_cast<float>(value);
        if (!(static_cast<double>(out[i]) == value) && index < inexact.index) {
            inexact.index = index;
            inexact.value = value;
        }
    }
}

}  // namespace rebox::verify_ref
