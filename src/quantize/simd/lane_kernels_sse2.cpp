// The lane kernels on SSE2 lanes: lane_table.hpp instantiated with lanes::Sse2.
#include "quantize/simd/simd_entries.hpp"

#if defined(__x86_64__)
#include "quantize/simd/lane_table.hpp"
#include "quantize/simd/lanes_sse2.hpp"

rebox::quant::simd::LaneKernel rebox::quant::simd::lane_kernel_sse2(GgmlType type) {
    return lanes::lane_kernel<lanes::Sse2>(type);
}
#endif
