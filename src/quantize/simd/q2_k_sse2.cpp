// Q2_K lane kernel on sse2 lanes: instantiates q2_k_lanes.hpp with the sse2 lane type.
#include "quantize/simd/simd_entries.hpp"

#if defined(__x86_64__)
#include "quantize/simd/lanes_sse2.hpp"
#include "quantize/simd/q2_k_lanes.hpp"

namespace rebox::quant::simd {

void quantize_q2_k_sse2(const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                        const float* imatrix) {
    lanes::q2_k_rows<lanes::Sse2>(src, static_cast<uint8_t*>(dst), nrows, n_per_row, imatrix);
}

}  // namespace rebox::quant::simd
#endif
