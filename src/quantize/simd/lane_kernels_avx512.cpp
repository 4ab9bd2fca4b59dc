// The lane kernels on AVX-512 lanes: lane_table.hpp instantiated with lanes::Avx512.
#include "quantize/simd/simd_entries.hpp"

#if defined(__x86_64__)
#include "quantize/simd/lane_table.hpp"
#include "quantize/simd/lanes_avx512.hpp"

rebox::quant::simd::LaneKernel rebox::quant::simd::lane_kernel_avx512(GgmlType type) {
    return lanes::lane_kernel<lanes::Avx512>(type);
}
#endif
