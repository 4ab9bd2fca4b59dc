// Q4_1 lane kernel on sse2 lanes: instantiates q4_1_q5_1_lanes.hpp with the sse2 lane type.
#include "quantize/simd/simd_entries.hpp"

#if defined(__x86_64__)
#include "quantize/simd/lanes_sse2.hpp"
#include "quantize/simd/q4_1_q5_1_lanes.hpp"

namespace rebox::quant::simd {

void quantize_q4_1_sse2(const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                        const float* imatrix) {
    if (imatrix)
        lanes::qx_1_imatrix_rows<lanes::Sse2, lanes::Q41>(src, static_cast<uint8_t*>(dst), nrows,
                                                          n_per_row, imatrix);
    else
        lanes::qx_1_ref_rows<lanes::Sse2, lanes::Q41>(src, static_cast<uint8_t*>(dst),
                                                      nrows * (n_per_row / 32));
}

}  // namespace rebox::quant::simd
#endif
