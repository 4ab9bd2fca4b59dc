// IEEE binary16 and bfloat16 <-> binary32 conversions (bit-exact, round-to-nearest-even on
// narrowing).
#pragma once

#include <cstdint>

namespace rebox {

float half_to_float(uint16_t h);
// Round-to-nearest-even; NaN stays NaN (quiet), overflow becomes infinity.
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
// Round-to-nearest-even as ggml does (NaN forced quiet).
uint16_t float_to_bf16(float f);
// True when f is exactly representable as binary16 (then *out holds it). NaN is never exact.
bool float_to_half_exact(float f, uint16_t* out);
// True when f is exactly representable as bfloat16 (its low 16 bits are zero; then *out holds
// it). NaN is never exact.
bool float_to_bf16_exact(float f, uint16_t* out);

}  // namespace rebox
