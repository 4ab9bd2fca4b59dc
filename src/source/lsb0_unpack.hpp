// Unpacking of lsb0 bit streams (code i at stream bits [i*bits, (i+1)*bits), LSB first), bits 1..8,
// a 64-bit word at a time. A plain function on spans: no I/O, easy to benchmark and fuzz.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rebox {

// Writes codes [first, first+count) of `stream` to out[0..count). The caller guarantees
// (first+count)*bits <= stream.size()*8.
void unpack_lsb0(std::span<const uint8_t> stream, int bits, uint64_t first, size_t count,
                 uint8_t* out);

}  // namespace rebox
