// verify's own binary32 -> binary16 rounding, written independently of format/half.hpp: the scales
// its re-quantizer stores are fp16, and a shared rounding bug would hide in both the writer and the
// check. Round to nearest, ties to even; subnormals kept; overflow to infinity; NaN to sign|0x7E00
// (the quiet NaN ggml's GGML_FP32_TO_FP16 writes, whatever the payload).
#pragma once

#include <cstdint>

namespace rebox::verify_ref {

uint16_t float_to_half_bits(float value);

}  // namespace rebox::verify_ref
