// lsb0 code extraction through a 16-bit little-endian window: a code of <= 8 bits starting at bit
// offset 0..7 of a byte always lies within that byte and the next one.
#include "ref_lsb0.hpp"

namespace rebox::verify_ref {

void extract_lsb0_codes(std::span<const uint8_t> stream, unsigned bits, uint64_t first,
                        std::span<uint8_t> out) {
    const uint32_t mask = (1u << bits) - 1u;
    uint64_t bit_position = first * bits;
    for (uint8_t& code : out) {
        const uint64_t byte_index = bit_position >> 3;
        const unsigned shift = static_cast<unsigned>(bit_position & 7u);
        uint32_t window = stream[byte_index];
        if (shift + bits > 8) window |= static_cast<uint32_t>(stream[byte_index + 1]) << 8;
        code = static_cast<uint8_t>((window >> shift) & mask);
        bit_position += bits;
    }
}

bool lsb0_padding_is_zero(std::span<const uint8_t> stream, unsigned bits, uint64_t count) {
    const uint64_t used_bits = count * bits;
    if (used_bits % 8 == 0) return true;
    const uint64_t last_byte = used_bits / 8;
    if (last_byte >= stream.size()) return false;
    const unsigned used_in_last = static_cast<unsigned>(used_bits % 8);
    return (stream[last_byte] >> used_in_last) == 0;
}

}  // namespace rebox::verify_ref
