// The lane kernels on AVX2 lanes: lane_table.hpp instantiated with lanes::Avx2.
#include "quantize/simd/simd_entries.hpp"

#if defined(__x86_64__)
#include "quantize/simd/lane_table.hpp"
#include "quantize/simd/lanes_avx2.hpp"

rebox::quant::simd::LaneKernel rebox::quant::simd::lane_kernel_avx2(GgmlType type) {
    return lanes::lane_kernel<lanes::Avx2>(type);
}
#endif
