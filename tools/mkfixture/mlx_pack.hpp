// MLX's affine packing written as the plainest loop (one bit at a time): within one row, code j
// occupies bits [j*bits, j*bits+bits) of the row's uint32 words, bit k of the row being bit k%32
// of word k/32, LSB first (docs/formats.md §1 "Bit packing"). Words are stored
// little-endian. Independent of rebox and of the mcq byte packer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace mkfixture {

// cols*bits must be a multiple of 32 (MLX guarantees it: cols is a multiple of group >= 32).
inline std::vector<uint32_t> pack_mlx_row(std::span<const uint8_t> codes, int bits) {
    std::vector<uint32_t> words(codes.size() * static_cast<size_t>(bits) / 32, 0);
    for (size_t j = 0; j < codes.size(); ++j) {
        for (int b = 0; b < bits; ++b) {
            const size_t k = j * static_cast<size_t>(bits) + static_cast<size_t>(b);
            if ((codes[j] >> b) & 1u) words[k / 32] |= uint32_t{1} << (k % 32);
        }
    }
    return words;
}

// bfloat16 from binary32, round to nearest, ties to even (NaN kept quiet).
inline uint16_t float_to_bf16(float value) {
    uint32_t x;
    static_assert(sizeof x == sizeof value);
    __builtin_memcpy(&x, &value, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace mkfixture
