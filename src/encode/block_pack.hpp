// The byte layouts the block encoders share (docs/gguf.md §2.2): little-endian fp16 fields, the
// 4-bit qs of Q4_0 / Q4_1 and the qh + qs of Q5_0 / Q5_1, filled from a block's 32 stored values
// (codes already offset into [0, 16) or [0, 32)).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rebox::encode_detail {

inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

inline void store_u16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
}

// qs[j]: low nibble value j, high nibble value j + 16 (ggml's dequantize_row_q4_0 / q4_1).
inline void pack_q4_qs(const uint8_t* values, uint8_t* qs) {
    for (size_t j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(values[j] | values[j + 16] << 4);
}

// qh (bit j = bit 4 of value j, a little-endian uint32) at out[0..3], then the low nibbles as
// pack_q4_qs at out[4..19] (Q5_0 / Q5_1 after d, or d and m).
inline void pack_q5_qh_qs(const uint8_t* values, uint8_t* out) {
    uint32_t qh = 0;
    for (uint32_t j = 0; j < 32; ++j) qh |= uint32_t{(values[j] >> 4) & 1u} << j;
    for (int k = 0; k < 4; ++k) out[k] = static_cast<uint8_t>(qh >> (8 * k));
    for (size_t j = 0; j < 16; ++j)
        out[4 + j] = static_cast<uint8_t>((values[j] & 0x0F) | (values[j + 16] & 0x0F) << 4);
}

}  // namespace rebox::encode_detail
