// verify's own statement of gemma's RMSNorm shift (docs/architectures.md, the Gemma family): the
// GGUF holds weight + 1 as llama.cpp's converter computes it. Its prepare_tensors widens BF16 to
// float32 before the add (a binary32 add) and keeps F16 as F16 (the sum rounded to fp16). Written
// apart from arch/transforms.cpp: the fp16 rounding here is a decimal-free scaling with nearbyint,
// not a bit-level float_to_half.
#pragma once

#include <span>

#include "verify/values/ref_expected.hpp"

namespace rebox::verify_ref {

// values: the source values widened exactly to binary32; replaced by what the GGUF must hold.
void add_one_as_converter(SourceFloat dtype, std::span<float> values);

// The nearest binary16 value to x (ties to even), as a double; +-inf past the fp16 range.
double round_to_fp16(double x);

}  // namespace rebox::verify_ref
