// The per-instruction-set entry points of the lane kernels (one *_sse2.cpp / *_avx2.cpp file each;
// only the *_avx2.cpp files are compiled with -mavx2). Arguments are validated by the caller;
// n_per_row is a multiple of the type's block size.
#pragma once

#include <cstdint>

namespace rebox::quant::simd {

#define REBOX_LANE_ENTRY(name)                                                      \
    void name##_sse2(const float* src, void* dst, int64_t nrows, int64_t n_per_row, \
                     const float* imatrix);                                         \
    void name##_avx2(const float* src, void* dst, int64_t nrows, int64_t n_per_row, \
                     const float* imatrix);

REBOX_LANE_ENTRY(quantize_q2_k)
REBOX_LANE_ENTRY(quantize_q4_k)
REBOX_LANE_ENTRY(quantize_q5_k)
REBOX_LANE_ENTRY(quantize_q6_k)
REBOX_LANE_ENTRY(quantize_q8_0)
REBOX_LANE_ENTRY(quantize_q4_0)
REBOX_LANE_ENTRY(quantize_q5_0)
REBOX_LANE_ENTRY(quantize_q4_1)
REBOX_LANE_ENTRY(quantize_q5_1)

#undef REBOX_LANE_ENTRY

}  // namespace rebox::quant::simd
