// The lane kernels of one instruction set, looked up by type: lane_kernels_sse2.cpp,
// lane_kernels_avx2.cpp (-mavx2) and lane_kernels_avx512.cpp (-mavx512*) each instantiate
// lane_table.hpp.
// Arguments are validated by the caller; n_per_row is a multiple of the type's block size.
#pragma once

#include <cstdint>

#include "rebox/ggml_type.hpp"

namespace rebox::quant::simd {

using LaneKernel = void (*)(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
                            const float* imatrix);

// nullptr when the type has no lane kernel.
LaneKernel lane_kernel_sse2(GgmlType type);
LaneKernel lane_kernel_avx2(GgmlType type);
LaneKernel lane_kernel_avx512(GgmlType type);

}  // namespace rebox::quant::simd
