// lsb0 code extraction. Eight consecutive codes of `bits` bits starting at a code index that is a
// multiple of 8 occupy exactly `bits` whole bytes, so the bulk runs over such 8-code groups: one
// little-endian 64-bit window per group (a full 8-byte memcpy while 8 bytes remain in the span,
// else only the group's own bytes) spread into one byte per code by three shift-OR-mask steps
// (4 bits: two nibbles per byte, verify's split_nibbles kernel: scalar, SSE2 or AVX2). Codes
// before the first aligned group and after the last one go through the one-code path, whose window
// never reads past the span.
#include "verify/values/ref_lsb0.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "verify/values/ref_kernels.hpp"

namespace rebox::verify_ref {
namespace {

// Little-endian value of up to 8 bytes at byte_index, reading only bytes inside the stream.
inline uint64_t load_window(std::span<const uint8_t> stream, uint64_t byte_index) {
    uint64_t window = 0;
    const uint64_t available = stream.size() - byte_index;
    if (available >= 8) {
        std::memcpy(&window, stream.data() + byte_index, 8);
    } else {
        uint8_t bytes[8] = {};
        std::memcpy(bytes, stream.data() + byte_index, static_cast<size_t>(available));
        for (int i = 7; i >= 0; --i) window = (window << 8) | bytes[i];
        return window;
    }
    if constexpr (std::endian::native == std::endian::big) window = __builtin_bswap64(window);
    return window;
}

inline uint8_t one_code(std::span<const uint8_t> stream, unsigned bits, uint64_t index) {
    const uint64_t bit_position = index * bits;
    const uint64_t window = load_window(stream, bit_position >> 3);
    return static_cast<uint8_t>((window >> (bit_position & 7u)) & ((1u << bits) - 1u));
}

// The eight Bits-bit codes in the low 8*Bits bits of `window`, one per byte (code k in byte k),
// by three halving steps: codes 0-3 / 4-7 into the two 32-bit lanes, then pairs into 16-bit
// lanes, then single codes into bytes; each step is one shift, one OR and one mask for all lanes.
template <unsigned Bits>
inline uint64_t spread_codes(uint64_t window) {
    // Low half of each lane: codes 0-3 of 32-bit lanes, 0-1 of 16-bit lanes, 0 of byte lanes.
    constexpr uint64_t low32 = (uint64_t{1} << (4 * Bits)) - 1;
    constexpr uint64_t low16 = ((uint64_t{1} << (2 * Bits)) - 1) * 0x0000000100000001ull;
    constexpr uint64_t low8 = ((uint64_t{1} << Bits) - 1) * 0x0001000100010001ull;
    uint64_t x = window;
    x = (x & low32) | ((x & (low32 << (4 * Bits))) << (32 - 4 * Bits));
    x = (x & low16) | ((x & (low16 << (2 * Bits))) << (16 - 2 * Bits));
    x = (x & low8) | ((x & (low8 << Bits)) << (8 - Bits));
    return x;
}

inline void store_codes(uint64_t spread, uint8_t* out) {
    if constexpr (std::endian::native == std::endian::big) spread = __builtin_bswap64(spread);
    std::memcpy(out, &spread, 8);
}

// Codes group*8 .. group*8+8*group_count-1, all 8-aligned; Bits is a constant so every shift is.
template <unsigned Bits>
void extract_groups(std::span<const uint8_t> stream, uint64_t group, uint64_t group_count,
                    uint8_t* out) {
    const uint8_t* bytes = stream.data();
    const uint64_t size = stream.size();
    uint64_t g = 0;
    // Whole 8-byte loads while they stay inside the span.
    for (; g < group_count && (group + g) * Bits + 8 <= size; ++g) {
        uint64_t window;
        std::memcpy(&window, bytes + (group + g) * Bits, 8);
        if constexpr (std::endian::native == std::endian::big) window = __builtin_bswap64(window);
        store_codes(spread_codes<Bits>(window), out + 8 * g);
    }
    for (; g < group_count; ++g)
        store_codes(spread_codes<Bits>(load_window(stream, (group + g) * Bits)), out + 8 * g);
}

template <unsigned Bits>
void extract_aligned(std::span<const uint8_t> stream, uint64_t group, uint64_t group_count,
                     uint8_t* out) {
    if constexpr (Bits == 8) {
        std::memcpy(out, stream.data() + group * 8, static_cast<size_t>(group_count * 8));
    } else if constexpr (Bits == 4) {
        // Byte j of the aligned run holds codes 2j (low nibble) and 2j+1 (high nibble).
        kernels().split_nibbles(stream.data() + group * 4, static_cast<size_t>(group_count * 4),
                                out);
    } else {
        extract_groups<Bits>(stream, group, group_count, out);
    }
}

}  // namespace

void extract_lsb0_codes(std::span<const uint8_t> stream, unsigned bits, uint64_t first,
                        std::span<uint8_t> out) {
    const uint64_t count = out.size();
    const uint64_t head = std::min<uint64_t>(count, (8 - first % 8) % 8);
    for (uint64_t i = 0; i < head; ++i) out[i] = one_code(stream, bits, first + i);
    const uint64_t group_count = (count - head) / 8;
    const uint64_t group = (first + head) / 8;
    uint8_t* group_out = out.data() + head;
    switch (bits) {
        case 1:
            extract_aligned<1>(stream, group, group_count, group_out);
            break;
        case 2:
            extract_aligned<2>(stream, group, group_count, group_out);
            break;
        case 3:
            extract_aligned<3>(stream, group, group_count, group_out);
            break;
        case 4:
            extract_aligned<4>(stream, group, group_count, group_out);
            break;
        case 5:
            extract_aligned<5>(stream, group, group_count, group_out);
            break;
        case 6:
            extract_aligned<6>(stream, group, group_count, group_out);
            break;
        case 7:
            extract_aligned<7>(stream, group, group_count, group_out);
            break;
        case 8:
            extract_aligned<8>(stream, group, group_count, group_out);
            break;
        default:
            return;
    }
    for (uint64_t i = head + group_count * 8; i < count; ++i)
        out[i] = one_code(stream, bits, first + i);
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
