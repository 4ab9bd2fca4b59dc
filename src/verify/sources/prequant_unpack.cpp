// The packing orders of GPTQ (a bit stream per column/row, 3-bit codes crossing words), AWQ gemm
// (interleaved nibbles) and compressed-tensors (whole codes per word), read one value at a time.
#include "verify/sources/prequant_unpack.hpp"

#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

uint32_t word_at(std::span<const uint8_t> words, uint64_t index) {
    return load_u32le(words.data() + 4 * index);
}

}  // namespace

uint32_t stream_bits(std::span<const uint8_t> words, uint64_t first_word, uint64_t word_stride,
                     uint64_t bit, unsigned bits) {
    const uint64_t word = bit / 32;
    const unsigned shift = static_cast<unsigned>(bit % 32);
    uint64_t window = word_at(words, first_word + word * word_stride);
    if (shift + bits > 32)  // the code continues in the low bits of the next stream word
        window |= static_cast<uint64_t>(word_at(words, first_word + (word + 1) * word_stride))
                  << 32;
    return static_cast<uint32_t>((window >> shift) & ((1u << bits) - 1u));
}

uint32_t gptq_code(std::span<const uint8_t> qweight, uint64_t out, unsigned bits, uint64_t o,
                   uint64_t k) {
    return stream_bits(qweight, o, out, k * bits, bits);
}

uint32_t gptq_stored_zero(std::span<const uint8_t> qzeros, uint64_t words_per_row, unsigned bits,
                          uint64_t g, uint64_t o) {
    return stream_bits(qzeros, g * words_per_row, 1, o * bits, bits);
}

uint32_t awq_nibble(uint32_t word, unsigned column_in_word) {
    static constexpr unsigned kNibbleOfColumn[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    return (word >> (4 * kNibbleOfColumn[column_in_word & 7u])) & 0xFu;
}

uint32_t awq_value(std::span<const uint8_t> packed, uint64_t out, uint64_t row, uint64_t o) {
    return awq_nibble(word_at(packed, row * (out / 8) + o / 8), static_cast<unsigned>(o % 8));
}

uint32_t ct_packed_code(std::span<const uint8_t> packed, uint64_t words_per_row, unsigned bits,
                        uint64_t o, uint64_t k) {
    const uint64_t per_word = 32 / bits;
    const uint32_t word = word_at(packed, o * words_per_row + k / per_word);
    return (word >> (bits * (k % per_word))) & ((1u << bits) - 1u);
}

uint32_t ct_packed_zero(std::span<const uint8_t> packed, uint64_t groups, unsigned bits, uint64_t g,
                        uint64_t o) {
    const uint64_t per_word = 32 / bits;
    const uint32_t word = word_at(packed, (o / per_word) * groups + g);
    return (word >> (bits * (o % per_word))) & ((1u << bits) - 1u);
}

}  // namespace rebox::verify_ref
