// Placeholder dispatcher of the lane kernels: none yet, every type runs the scalar kernels.
#include "quantize/simd/simd_kernels.hpp"

namespace rebox::quant {

bool quantize_rows_simd(KernelPath, GgmlType, const float*, void*, int64_t, int64_t, const float*) {
    return false;
}

}  // namespace rebox::quant
