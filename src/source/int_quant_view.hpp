// Reading an IntQuantView (GPTQ, AWQ, compressed-tensors codes, zero points and scales) straight
// from the checkpoint's own packing, a row segment at a time: the codes q, the integer zero z and
// the scale s of a group, q - z, and each group's membership. Plain functions on spans, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>

#include "source/source_model.hpp"

namespace rebox {

// The group of input column col (g_idx[col], or col / group).
uint32_t int_group_of(const IntQuantView& v, int64_t col);
// Codes q of row `row`, columns [col0, col0+count) (within the row): unsigned codes as stored,
// or the signed bytes for IntCodeLayout::row_int8.
void int_row_codes(const IntQuantView& v, int64_t row, int64_t col0, size_t count, int16_t* out);
// The integer zero point z of (row, group): stored value + zero_add, or zero_constant.
int32_t int_zero(const IntQuantView& v, int64_t row, int64_t group);
// The stored scale of (row, group): its bytes (2 or 4, little-endian) and its value in binary32.
const uint8_t* int_scale_bytes(const IntQuantView& v, int64_t row, int64_t group);
float int_scale(const IntQuantView& v, int64_t row, int64_t group);
// q - z for values [first, first+count) in row-major [rows, cols] order (may span rows).
void int_deltas(const IntQuantView& v, uint64_t first, size_t count, int16_t* out);

}  // namespace rebox
