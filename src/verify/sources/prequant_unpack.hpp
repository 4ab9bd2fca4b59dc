// verify's own unpacking of GPTQ, AWQ (gemm) and compressed-tensors integer codes, one value at a
// time from the stored int32 words (little-endian), written from the formats' packing order
// (docs/formats.md §5) and independent of source/: a code or zero point is addressed by its
// logical (output row o, input column k) or (group g, output row o) position.
#pragma once

#include <cstdint>
#include <span>

namespace rebox::verify_ref {

// Bits [bit, bit+bits) of a little-endian stream of 32-bit words, where stream word i is
// words[first_word + i * word_stride] (4 bytes each). A code may straddle two words (3-bit GPTQ).
// bits 1..8; the caller checks that the words exist.
uint32_t stream_bits(std::span<const uint8_t> words, uint64_t first_word, uint64_t word_stride,
                     uint64_t bit, unsigned bits);

// GPTQ qweight int32 [in*bits/32, out]: column o is one bit stream along the input dimension
// (stream word r = qweight[r][o]); code k sits at stream bits [k*bits, k*bits+bits).
uint32_t gptq_code(std::span<const uint8_t> qweight, uint64_t out, unsigned bits, uint64_t o,
                   uint64_t k);
// GPTQ qzeros int32 [groups, out*bits/32]: row g is one bit stream along the output dimension;
// the stored zero of output o sits at bits [o*bits, o*bits+bits) (checkpoint_format "gptq" stores
// z - 1, the caller adds 1).
uint32_t gptq_stored_zero(std::span<const uint8_t> qzeros, uint64_t words_per_row, unsigned bits,
                          uint64_t g, uint64_t o);

// AWQ gemm: a word holds 8 nibbles for 8 consecutive output columns 8w..8w+7, nibble n holding
// column 8w + [0,2,4,6,1,3,5,7][n]; column c of the word is therefore nibble [0,4,1,5,2,6,3,7][c].
uint32_t awq_nibble(uint32_t word, unsigned column_in_word);
// AWQ qweight int32 [in, out/8] (and qzeros [in/group, out/8] with row = group): value at
// (row, output column o).
uint32_t awq_value(std::span<const uint8_t> packed, uint64_t out, uint64_t row, uint64_t o);

// compressed-tensors pack_to_int32 along dim 1: each row is ceil(in/pf) words, pf = 32/bits codes
// per word (3-bit: 10, top 2 bits unused); code k is bits [(k%pf)*bits, ...) of word k/pf. The
// stored code is unsigned (signed code + 2^(bits-1)).
uint32_t ct_packed_code(std::span<const uint8_t> packed, uint64_t words_per_row, unsigned bits,
                        uint64_t o, uint64_t k);
// compressed-tensors weight_zero_point packed along dim 0: int32 [ceil(out/pf), groups]; the
// stored zero of output o, group g is bits [(o%pf)*bits, ...) of word [o/pf][g] (unsigned,
// +offset).
uint32_t ct_packed_zero(std::span<const uint8_t> packed, uint64_t groups, unsigned bits, uint64_t g,
                        uint64_t o);

}  // namespace rebox::verify_ref
