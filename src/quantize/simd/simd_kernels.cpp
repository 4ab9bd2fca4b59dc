// Dispatches a quantization to its lane kernel for the requested path, or returns false (the caller
// then runs the scalar kernel) for types without one, the scalar path and non-x86-64 CPUs.
#include "quantize/simd/simd_kernels.hpp"

#include "quantize/simd/simd_entries.hpp"

namespace rebox::quant {

namespace {

using LaneEntry = void (*)(const float*, void*, int64_t, int64_t, const float*);

struct LaneKernel {
    LaneEntry sse2;
    LaneEntry avx2;
};

bool find_lane_kernel([[maybe_unused]] GgmlType type, [[maybe_unused]] LaneKernel* kernel) {
#if defined(__x86_64__)
    switch (type) {
        case GgmlType::Q4_K:
            *kernel = {simd::quantize_q4_k_sse2, simd::quantize_q4_k_avx2};
            return true;
        case GgmlType::Q5_K:
            *kernel = {simd::quantize_q5_k_sse2, simd::quantize_q5_k_avx2};
            return true;
        case GgmlType::Q6_K:
            *kernel = {simd::quantize_q6_k_sse2, simd::quantize_q6_k_avx2};
            return true;
        case GgmlType::Q8_0:
            *kernel = {simd::quantize_q8_0_sse2, simd::quantize_q8_0_avx2};
            return true;
        case GgmlType::Q4_0:
            *kernel = {simd::quantize_q4_0_sse2, simd::quantize_q4_0_avx2};
            return true;
        case GgmlType::Q5_0:
            *kernel = {simd::quantize_q5_0_sse2, simd::quantize_q5_0_avx2};
            return true;
        case GgmlType::Q4_1:
            *kernel = {simd::quantize_q4_1_sse2, simd::quantize_q4_1_avx2};
            return true;
        case GgmlType::Q5_1:
            *kernel = {simd::quantize_q5_1_sse2, simd::quantize_q5_1_avx2};
            return true;
        case GgmlType::Q2_K:
            *kernel = {simd::quantize_q2_k_sse2, simd::quantize_q2_k_avx2};
            return true;
        default:
            return false;
    }
#else
    return false;
#endif
}

}  // namespace

bool quantize_rows_simd(KernelPath path, GgmlType type, const float* src, void* dst, int64_t nrows,
                        int64_t n_per_row, const float* imatrix) {
    if (path == KernelPath::scalar || !kernel_path_supported(path)) return false;
    LaneKernel kernel{};
    if (!find_lane_kernel(type, &kernel)) return false;
    (path == KernelPath::avx2 ? kernel.avx2 : kernel.sse2)(src, dst, nrows, n_per_row, imatrix);
    return true;
}

}  // namespace rebox::quant
