// The binary32 values of any source tensor, the one read the writer's F32/F16/BF16 paths and the
// plan's fit checks share: a QuantView or IntQuantView dequantized with the block kernels
// (code*scale+min or (q-z)*s), a float tensor widened exactly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "source/source_model.hpp"

namespace rebox {

// Values [first, first+count) of `tensor` as binary32 into out.
void source_values_f32(const SourceTensor& tensor, uint64_t first, size_t count, float* out);

}  // namespace rebox
