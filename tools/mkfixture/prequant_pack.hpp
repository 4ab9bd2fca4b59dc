// The three integer zero-point packings (GPTQ, AWQ gemm, compressed-tensors pack-quantized) written
// as the plainest loops from docs/formats.md §5, one bit or one field at a time. Independent of
// rebox's readers and of the mcq/MLX packers: these are the ground truth of the prequant fixtures.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace mkfixture {

// One little-endian, LSB-first bit stream of `bits`-bit fields over 32-bit words: field j occupies
// stream bits [j*bits, j*bits+bits), stream bit p is bit p%32 of word p/32 (docs/formats.md §5.1: a
// GPTQ qweight column, a GPTQ qzeros row; 3-bit fields cross words). count*bits must be a multiple
// of 32. Only the low `bits` bits of each field are used.
inline std::vector<uint32_t> pack_bit_stream(std::span<const uint32_t> fields, int bits) {
    if ((fields.size() * static_cast<size_t>(bits)) % 32 != 0)
        throw std::logic_error("pack_bit_stream: fields*bits is not a whole number of words");
    std::vector<uint32_t> words(fields.size() * static_cast<size_t>(bits) / 32, 0);
    for (size_t j = 0; j < fields.size(); ++j) {
        for (int b = 0; b < bits; ++b) {
            const size_t p = j * static_cast<size_t>(bits) + static_cast<size_t>(b);
            if ((fields[j] >> b) & 1u) words[p / 32] |= uint32_t{1} << (p % 32);
        }
    }
    return words;
}

// AWQ gemm: nibble i of a word holds logical column AWQ_ORDER[i] of its 8 (docs/formats.md §5.2).
inline constexpr std::array<int, 8> kAwqOrder = {0, 2, 4, 6, 1, 3, 5, 7};

// The word of 8 consecutive 4-bit fields (columns 8w..8w+7) in AWQ's interleaved nibble order.
inline uint32_t pack_awq_word(std::span<const uint32_t, 8> columns) {
    uint32_t word = 0;
    for (int i = 0; i < 8; ++i)
        word |= (columns[static_cast<size_t>(kAwqOrder[static_cast<size_t>(i)])] & 0xfu) << (4 * i);
    return word;
}

// compressed-tensors pack_to_int32: 32/bits whole fields per word, LSB first, never crossing a
// word (3 bits: 10 per word, bits 30-31 unused); the last word is padded with zero fields
// (docs/formats.md §5.3). `fields` are the stored (offset, unsigned) values.
inline std::vector<uint32_t> pack_ct_fields(std::span<const uint32_t> fields, int bits) {
    const size_t per_word = static_cast<size_t>(32 / bits);
    std::vector<uint32_t> words((fields.size() + per_word - 1) / per_word, 0);
    const uint32_t mask = bits == 32 ? 0xffffffffu : (uint32_t{1} << bits) - 1u;
    for (size_t j = 0; j < fields.size(); ++j)
        words[j / per_word] |= (fields[j] & mask) << (static_cast<size_t>(bits) * (j % per_word));
    return words;
}

// GPTQ qzeros row: the zero points z of one group for every output column as one bit stream;
// checkpoint_format "gptq" (v1) stores z - 1, "gptq_v2" stores z (docs/formats.md §5.1).
inline std::vector<uint32_t> gptq_qzeros_row(std::span<const int32_t> z, int bits, bool v1) {
    std::vector<uint32_t> fields(z.size());
    for (size_t n = 0; n < z.size(); ++n)
        fields[n] = static_cast<uint32_t>(v1 ? z[n] - 1 : z[n]) & ((uint32_t{1} << bits) - 1u);
    return pack_bit_stream(fields, bits);
}

// compressed-tensors: signed codes (or zero points) stored as q_s + 2^(bits-1), then packed by
// pack_ct_fields (docs/formats.md §5.3).
inline std::vector<uint32_t> pack_ct_signed(std::span<const int32_t> q_signed, int bits) {
    std::vector<uint32_t> fields(q_signed.size());
    for (size_t j = 0; j < q_signed.size(); ++j)
        fields[j] = static_cast<uint32_t>(q_signed[j] + (1 << (bits - 1)));
    return pack_ct_fields(fields, bits);
}

}  // namespace mkfixture
