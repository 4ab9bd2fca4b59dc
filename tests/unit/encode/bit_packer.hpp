// Test-local lsb0 packer, one bit at a time straight from the spec's wording ("code i occupies
// stream bits i*bits ... i*bits+bits-1; stream bit k is bit k%8 of byte k/8; LSB first"), so the
// kernels are checked against an obviously-correct loop rather than against themselves.
#pragma once

#include <cstdint>
#include <vector>

namespace rebox::test {

inline std::vector<uint8_t> pack_lsb0_bitwise(const std::vector<uint8_t>& codes, int bits) {
    std::vector<uint8_t> stream((codes.size() * bits + 7) / 8, 0);
    for (size_t i = 0; i < codes.size(); ++i) {
        for (int b = 0; b < bits; ++b) {
            const size_t k = i * bits + b;
            if ((codes[i] >> b) & 1) stream[k / 8] |= static_cast<uint8_t>(1u << (k % 8));
        }
    }
    return stream;
}

}  // namespace rebox::test
