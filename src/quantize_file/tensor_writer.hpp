// Writes one tensor of `rebox quantize` to its place in the output: the source rows read from the
// mapped input in chunks, checked (no NaN/Inf), widened to F32 (F16/BF16 exactly, quantized
// tensors through dequantize_row), quantized with quantize_rows (or narrowed to F16/BF16) on
// `threads` threads, and written with pwrite. A tensor whose type does not change is copied as it
// is (its float values still checked). Memory: one chunk of rows per thread; the mapped source
// pages of each finished chunk are released.
#pragma once

#include <cstdint>

#include "format/atomic_output.hpp"
#include "format/gguf_file.hpp"

namespace rebox {

struct TensorWrite {
    const GgufFile* shard = nullptr;  // the input file holding the tensor
    const GgufTensorInfo* source = nullptr;
    GgmlType target = GgmlType::F32;
    const float* imatrix = nullptr;  // ne[0] * ne[2] weights (one slice per expert) or nullptr
    AtomicOutput* out = nullptr;
    uint64_t out_offset = 0;  // absolute offset of the tensor's data in `out`
};

// Throws Error (input class) naming the tensor for a non-finite source value and for a value
// that F16/BF16 cannot hold.
void write_quantized_tensor(const TensorWrite& job, unsigned threads);

}  // namespace rebox
