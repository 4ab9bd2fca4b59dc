// Picks the kernels' instruction set at run time: AVX-512 (F, DQ, BW and VL) when the CPU has it,
// else AVX2, else SSE2 (the x86-64 baseline), scalar elsewhere; REBOX_KERNEL_PATH=
// scalar|sse2|avx2|avx512 overrides it when supported.
#include "quantize/kernel_path.hpp"

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace rebox::quant {
namespace {

#if defined(__x86_64__)
// F16C (cpuid leaf 1, ecx bit 29): read directly, as clang 14's __builtin_cpu_supports does not
// know "f16c".
bool cpu_has_f16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}
#endif

}  // namespace

const char* kernel_path_name(KernelPath path) {
    switch (path) {
        case KernelPath::scalar:
            return "scalar";
        case KernelPath::sse2:
            return "sse2";
        case KernelPath::avx2:
            return "avx2";
        case KernelPath::avx512:
            return "avx512";
    }
    return "scalar";
}

bool kernel_path_supported(KernelPath path) {
    switch (path) {
        case KernelPath::scalar:
            return true;
#if defined(__x86_64__)
        case KernelPath::sse2:
            return true;
        case KernelPath::avx2:
            return __builtin_cpu_supports("avx2") && cpu_has_f16c();
        case KernelPath::avx512:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
        case KernelPath::sse2:
        case KernelPath::avx2:
        case KernelPath::avx512:
            return false;
#endif
    }
    return false;
}

KernelPath best_kernel_path() {
    // An override naming a path this CPU lacks (or no path) is ignored: the bytes are the same on
    // every path, so only the speed changes.
    if (const char* forced = std::getenv("REBOX_KERNEL_PATH")) {
        for (KernelPath path :
             {KernelPath::scalar, KernelPath::sse2, KernelPath::avx2, KernelPath::avx512})
            if (std::strcmp(forced, kernel_path_name(path)) == 0 && kernel_path_supported(path))
                return path;
    }
    if (kernel_path_supported(KernelPath::avx512)) return KernelPath::avx512;
    if (kernel_path_supported(KernelPath::avx2)) return KernelPath::avx2;
    if (kernel_path_supported(KernelPath::sse2)) return KernelPath::sse2;
    return KernelPath::scalar;
}

}  // namespace rebox::quant
