// Picks the kernels' instruction set at run time (placeholder: scalar only until the lane kernels land).
#include "quantize/kernel_path.hpp"

namespace rebox::quant {

const char* kernel_path_name(KernelPath path) {
    switch (path) {
        case KernelPath::scalar: return "scalar";
        case KernelPath::sse2: return "sse2";
        case KernelPath::avx2: return "avx2";
    }
    return "scalar";
}

KernelPath best_kernel_path() { return KernelPath::scalar; }

bool kernel_path_supported(KernelPath path) { return path == KernelPath::scalar; }

}  // namespace rebox::quant
