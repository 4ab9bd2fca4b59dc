// Which instruction set the quantization kernels run on: scalar C++ (any CPU), SSE2 lanes (the
// x86-64 baseline), AVX2 or AVX-512 lanes (chosen at run time). Every path gives the same bytes.
#pragma once

namespace rebox::quant {

enum class KernelPath { scalar, sse2, avx2, avx512 };

const char* kernel_path_name(KernelPath path);  // "scalar", "sse2", "avx2", "avx512"
// The fastest path this CPU runs (__builtin_cpu_supports), or REBOX_KERNEL_PATH from the
// environment when it names one the CPU supports.
KernelPath best_kernel_path();
bool kernel_path_supported(KernelPath path);

}  // namespace rebox::quant
