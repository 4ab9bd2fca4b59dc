// The lsb0 bit packer of mcq-v1 written as the plainest possible loop (one bit at a time): code i
// occupies stream bits i*bits .. i*bits+bits-1, stream bit k is bit k%8 of byte k/8, LSB first.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace mkfixture {

inline std::vector<uint8_t> pack_lsb0(std::span<const uint8_t> codes, int bits) {
    std::vector<uint8_t> stream((codes.size() * static_cast<size_t>(bits) + 7) / 8, 0);
    uint64_t k = 0;  // stream bit index
    for (uint8_t code : codes) {
        for (int b = 0; b < bits; ++b, ++k) {
            if ((code >> b) & 1u) stream[k / 8] |= static_cast<uint8_t>(1u << (k % 8));
        }
    }
    return stream;
}

}  // namespace mkfixture
