// The binary32 values of any source tensor, the one read the writer's F32/F16/BF16 paths, the
// plan's fit checks and the readers' own comparisons share: a QuantView dequantized
// (code*scale+min), an IntQuantView ((q-z)*s), an Fp4View (E2M1 * scale), an Fp8View (E4M3 * block
// scale, source/fp8_values.hpp), a float tensor widened
// exactly. The encoders (encode/) read the same stored values through stored_float / fp4_code_at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "source/source_model.hpp"

namespace rebox {

// Values [first, first+count) of `tensor` as binary32 into out.
void source_values_f32(const SourceTensor& tensor, uint64_t first, size_t count, float* out);

// Values [first, first+count) as binary32: float(code)*float(scale)+float(min), one rounding.
void dequantize_f32(const QuantView& q, uint64_t first, size_t count, float* out);
// The same binary32 values stored as fp16 bits (out: count uint16_t). The caller (the plan) checked
// that every value is exactly representable; a value that is not throws rebox::Error.
void dequantize_f16(const QuantView& q, uint64_t first, size_t count, uint16_t* out);

// Values [first, first+count) (row-major [rows, cols]) as binary32: float(q - z) * float(s).
void dequantize_int_f32(const IntQuantView& v, uint64_t first, size_t count, float* out);

// E2M1 code -> value (OCP order: sign << 3 | magnitude index).
float e2m1_value(uint8_t code);
// E8M0 byte e -> 2^(e-127) (e < 255); E4M3 byte (bit 7 clear, not 0x7F) -> its value.
float e8m0_value(uint8_t e);
float e4m3_value(uint8_t byte);

// Values [first, first+count) as binary32: E2M1[code] * scale (exact: at most 3 significant bits
// times a power of two or an E4M3 value).
void dequantize_fp4_f32(const Fp4View& v, uint64_t first, size_t count, float* out);

// Value g of a scale/min array of `dtype` as binary32 (exact for every dtype).
float stored_float(FloatDtype dtype, std::span<const uint8_t> values, uint64_t g);
// Code k of an FP4 stream (element 2i in the low nibble of byte i).
uint8_t fp4_code_at(const Fp4View& v, uint64_t k);

}  // namespace rebox
