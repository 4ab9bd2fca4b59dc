// Q5_0 lane kernel on avx2 lanes: instantiates legacy_lanes.hpp with the avx2 lane type.
#include "quantize/simd/simd_entries.hpp"

#if defined(__x86_64__)
#include "quantize/simd/lanes_avx2.hpp"
#include "quantize/simd/legacy_lanes.hpp"

namespace rebox::quant::simd {

void quantize_q5_0_avx2(const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                        const float* imatrix) {
    if (imatrix)
        lanes::qx_0_imatrix_rows<lanes::Avx2, lanes::Q50>(src, static_cast<uint8_t*>(dst), nrows,
                                                          n_per_row, imatrix);
    else
        lanes::qx_0_ref_rows<lanes::Avx2, lanes::Q50>(src, static_cast<uint8_t*>(dst),
                                                      nrows * (n_per_row / 32));
}

}  // namespace rebox::quant::simd
#endif
