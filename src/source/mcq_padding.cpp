// mcq-v1 "Bits after the last code, up to the byte boundary, are zero": every stream bit at or
// after n_codes*bits must be zero (a stream too short to hold the codes is not valid either).
#include "source/mcq_reader.hpp"

namespace rebox {

bool mcq_padding_is_zero(std::span<const uint8_t> codes, uint64_t n_codes, int bits) {
    if (bits < 1 || bits > 8 || n_codes > (UINT64_MAX - 7) / 8) return false;
    const uint64_t used_bits = n_codes * static_cast<uint64_t>(bits);
    uint64_t byte = used_bits / 8;
    const unsigned used_in_last = static_cast<unsigned>(used_bits % 8);
    if (used_in_last != 0) {
        if (byte >= codes.size()) return false;
        if ((codes[byte] >> used_in_last) != 0) return false;
        ++byte;
    }
    if (byte > codes.size()) return false;
    for (; byte < codes.size(); ++byte)
        if (codes[byte] != 0) return false;
    return true;
}

}  // namespace rebox
