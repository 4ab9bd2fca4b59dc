// (q - z) * s per value for the GPTQ / AWQ / compressed-tensors layouts: codes and zero points
// come from prequant_unpack, scales are widened exactly to fp64, the product (exact in fp64: at
// most 9 + 24 significant bits) is rounded once to binary32 and checked to be that value.
#include "verify/sources/prequant_expected.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

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

// Codes k0 .. k0+run-1 of row o; compressed-tensors' packed rows word by word (the codes of a
// word are lsb first), every other layout through code_at.
void codes_of_run(const PrequantSource& source, uint64_t o, uint64_t k0, uint64_t run,
                  int64_t* codes) {
    if (source.layout != PrequantLayout::ct_packed || 32 % source.bits != 0) {
        for (uint64_t j = 0; j < run; ++j) codes[j] = code_at(source, o, k0 + j);
        return;
    }
    const uint64_t per_word = 32 / source.bits;
    const uint32_t mask = (1u << source.bits) - 1u;
    const uint8_t* row = source.weight.data() + 4 * o * source.weight_words_per_row;
    for (uint64_t j = 0; j < run;) {
        const uint64_t k = k0 + j;
        uint32_t word = load_u32le(row + 4 * (k / per_word)) >> (source.bits * (k % per_word));
        for (uint64_t at = k % per_word; at < per_word && j < run; ++at, ++j, word >>= source.bits)
            codes[j] = word & mask;
    }
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
    // Runs of one row and, without g_idx, one group: zero point and scale read once per run, the
    // row and column advanced instead of divided out per value.
    int64_t codes[64];
    for (size_t i = 0; i < out.size();) {
        const uint64_t index = first + i;
        const uint64_t o = index / source.in, k0 = index % source.in;
        uint64_t run = std::min<uint64_t>(source.in - k0, out.size() - i);
        if (source.g_idx.empty()) run = std::min<uint64_t>(run, source.group - k0 % source.group);
        run = std::min<uint64_t>(run, std::size(codes));
        const uint64_t g = group_of(source, k0);
        if (!source.g_idx.empty())  // act-order: the run ends where the group changes
            for (uint64_t j = 1; j < run; ++j)
                if (group_of(source, k0 + j) != g) {
                    run = j;
                    break;
                }
        const int64_t z = zero_at(source, g, o);
        const double scale = prequant_scale(source, g, o);
        codes_of_run(source, o, k0, run, codes);
        for (uint64_t j = 0; j < run; ++j) {
            const double value = static_cast<double>(codes[j] - z) * scale;
            // A finite fp64 value beyond binary32's range becomes an infinity (a plain cast would
            // be undefined behaviour) and is reported like any other value that is not a
            // binary32 value.
            float& slot = out[i + j];
            slot = std::isfinite(value) && std::fabs(value) > std::numeric_limits<float>::max()
                       ? std::copysign(std::numeric_limits<float>::infinity(),
                                       static_cast<float>(value > 0 ? 1 : -1))
                       : static_cast<float>(value);
            if (!(static_cast<double>(slot) == value) && index + j < inexact.index) {
                inexact.index = index + j;
                inexact.value = value;
            }
        }
        i += static_cast<size_t>(run);
    }
}

}  // namespace rebox::verify_ref
