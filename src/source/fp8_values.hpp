// FP8 E4M3 (OCP "E4M3FN": 1 sign, 4 exponent bits with bias 7, 3 mantissa bits, no infinities,
// 0x7F / 0xFF NaN) and the value of an Fp8View: e4m3 * block scale, computed in double, where it
// is exact (4 significant bits times at most 24).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "source/source_model.hpp"

namespace rebox {

// True for the two NaN bytes 0x7F and 0xFF.
inline bool e4m3_is_nan(uint8_t byte) { return (byte & 0x7f) == 0x7f; }
// The exact value of an E4M3 byte (NaN for 0x7F / 0xFF; subnormals m * 2^-9; 0x80 is -0).
double e4m3_to_double(uint8_t byte);
// e4m3_to_double of every byte, indexed by the byte (for the per-value loops).
const std::array<double, 256>& e4m3_table();

// Scale (block row br, block column bc) of the view, widened exactly.
double fp8_scale(const Fp8View& v, int64_t br, int64_t bc);
// Value i (row-major [rows, cols]) as the exact product e4m3 * scale.
double fp8_value(const Fp8View& v, uint64_t i);

// Values [first, first+count) as binary32. The plan checked that every product is a binary32
// value (plan/fp8_rules), so the conversion never rounds.
void dequantize_fp8_f32(const Fp8View& v, uint64_t first, size_t count, float* out);

}  // namespace rebox
