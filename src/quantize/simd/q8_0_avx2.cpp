// Q8_0 lane kernel on avx2 lanes: instantiates legacy_lanes.hpp with the avx2 lane type.
#include "quantize/simd/simd_entries.hpp"

#if defined(__x86_64__)
#include "quantize/simd/lanes_avx2.hpp"
#include "quantize/simd/legacy_lanes.hpp"

namespace rebox::quant::simd {

void quantize_q8_0_avx2(const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                        const float* imatrix) {
    (void)imatrix;  // Q8_0 ignores the imatrix, as ggml does
    lanes::q8_0_rows<lanes::Avx2>(src, static_cast<uint8_t*>(dst), nrows * (n_per_row / 32));
}

}  // namespace rebox::quant::simd
#endif
