// Dispatches a quantization to its lane kernel for the requested path, or returns false (the caller
// then runs the scalar kernel) for types without one, the scalar path and non-x86-64 CPUs.
#include "quantize/simd/simd_kernels.hpp"

#include "quantize/simd/simd_entries.hpp"

namespace rebox::quant {

bool quantize_rows_simd(KernelPath path, GgmlType type, const float* src, void* dst, int64_t nrows,
                        int64_t n_per_row, const float* imatrix) {
#if defined(__x86_64__)
    if (path == KernelPath::scalar || !kernel_path_supported(path)) return false;
    const simd::LaneKernel kernel = path == KernelPath::avx512 ? simd::lane_kernel_avx512(type)
                                    : path == KernelPath::avx2 ? simd::lane_kernel_avx2(type)
                                                               : simd::lane_kernel_sse2(type);
    if (!kernel) return false;
    kernel(src, static_cast<uint8_t*>(dst), nrows, n_per_row, imatrix);
    return true;
#else
    (void)path, (void)type, (void)src, (void)dst, (void)nrows, (void)n_per_row, (void)imatrix;
    return false;
#endif
}

}  // namespace rebox::quant
