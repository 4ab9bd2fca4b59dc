// The lane-parallel (SSE2 / AVX2) quantizers: each lane repeats ggml's exact sequence of float
// operations for its own sub-block, block or row, so the bytes equal the scalar kernels'.
#pragma once

#include <cstdint>

#include "quantize/kernel_path.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox::quant {

// Quantizes nrows x n_per_row values with `path` (sse2, avx2 or avx512) when this file has a lane kernel
// for (type, imatrix given or not); returns false, writing nothing, when it has none (the caller
// then runs the scalar kernel). Arguments are already validated by the caller.
bool quantize_rows_simd(KernelPath path, GgmlType type, const float* src, void* dst, int64_t nrows,
                        int64_t n_per_row, const float* imatrix);

}  // namespace rebox::quant
