// lsb0 bit-stream unpacking (spec mcq-v1 "Bit stream layout lsb0"): a 64-bit little-endian window
// is loaded and as many whole codes as it holds are shifted out; 3-, 4- and 8-bit streams have
// byte-aligned fast paths. Never reads past stream.size().
#include "source/lsb0_unpack.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace rebox {
namespace {

// The 8 bytes at `byte` as a little-endian word; bytes beyond the stream read as zero.
inline uint64_t load_le64(std::span<const uint8_t> stream, uint64_t byte) {
    uint64_t word = 0;
    if (byte + 8 <= stream.size()) {
        std::memcpy(&word, stream.data() + byte, 8);
    } else if (byte < stream.size()) {
        std::memcpy(&word, stream.data() + byte, stream.size() - byte);
    }
    if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
    return word;
}

// Any bit width 1..8 at any starting code: one window load per (64 - shift) / bits codes.
void unpack_generic(std::span<const uint8_t> stream, int bits, uint64_t first, size_t count,
                    uint8_t* out) {
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    uint64_t bit = first * static_cast<uint64_t>(bits);
    size_t done = 0;
    while (done < count) {
        const unsigned shift = static_cast<unsigned>(bit & 7);
        uint64_t window = load_le64(stream, bit >> 3) >> shift;
        const size_t in_window = std::min<size_t>((64 - shift) / bits, count - done);
        for (size_t k = 0; k < in_window; ++k) {
            out[done++] = static_cast<uint8_t>(window & mask);
            window >>= bits;
        }
        bit += in_window * static_cast<uint64_t>(bits);
    }
}

// 4 bits: each byte holds codes 2k (low nibble) and 2k+1 (high nibble).
void unpack_4(std::span<const uint8_t> stream, uint64_t first, size_t count, uint8_t* out) {
    size_t done = 0;
    if (first & 1) {
        unpack_generic(stream, 4, first, 1, out);
        done = 1;
    }
    const uint8_t* in = stream.data() + (first + done) / 2;
    for (; done + 2 <= count; done += 2, ++in) {
        out[done] = *in & 0x0F;
        out[done + 1] = *in >> 4;
    }
    if (done < count) unpack_generic(stream, 4, first + done, count - done, out + done);
}

// 3 bits: every 3 bytes hold 8 codes once the start is a multiple of 8 codes.
void unpack_3(std::span<const uint8_t> stream, uint64_t first, size_t count, uint8_t* out) {
    size_t done = std::min<size_t>((8 - first % 8) % 8, count);
    if (done) unpack_generic(stream, 3, first, done, out);
    const uint8_t* in = stream.data() + (first + done) / 8 * 3;
    for (; done + 8 <= count; done += 8, in += 3) {
        const uint32_t w = uint32_t{in[0]} | uint32_t{in[1]} << 8 | uint32_t{in[2]} << 16;
        uint8_t* o = out + done;
        o[0] = w & 7;
        o[1] = (w >> 3) & 7;
        o[2] = (w >> 6) & 7;
        o[3] = (w >> 9) & 7;
        o[4] = (w >> 12) & 7;
        o[5] = (w >> 15) & 7;
        o[6] = (w >> 18) & 7;
        o[7] = (w >> 21) & 7;
    }
    if (done < count) unpack_generic(stream, 3, first + done, count - done, out + done);
}

}  // namespace

void unpack_lsb0(std::span<const uint8_t> stream, int bits, uint64_t first, size_t count,
                 uint8_t* out) {
    if (count == 0) return;
    switch (bits) {
        case 8:
            std::memcpy(out, stream.data() + first, count);
            return;
        case 4:
            unpack_4(stream, first, count, out);
            return;
        case 3:
            unpack_3(stream, first, count, out);
            return;
        default:
            unpack_generic(stream, bits, first, count, out);
    }
}

}  // namespace rebox
