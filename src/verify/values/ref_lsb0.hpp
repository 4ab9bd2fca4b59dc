// verify's own reader of the mcq-v1 "lsb0" code stream (spec: code i occupies stream bits
// i*bits .. i*bits+bits-1, stream bit k is bit k%8 of byte k/8, least significant bit first).
// Independent of source/lsb0_unpack.hpp.
#pragma once

#include <cstdint>
#include <span>

namespace rebox::verify_ref {

// Writes codes first .. first+out.size()-1 into out. bits must be 1..8 and the stream must hold
// ceil((first+out.size())*bits/8) bytes (the caller checks sizes against the metadata first).
void extract_lsb0_codes(std::span<const uint8_t> stream, unsigned bits, uint64_t first,
                        std::span<uint8_t> out);

// True when every stream bit after code count-1 (up to the byte boundary) is zero.
bool lsb0_padding_is_zero(std::span<const uint8_t> stream, unsigned bits, uint64_t count);

}  // namespace rebox::verify_ref
