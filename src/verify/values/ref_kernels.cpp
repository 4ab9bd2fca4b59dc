// The choice of verify's kernel path (scalar / SSE2 / AVX2) and the scalar kernels, which are the
// plain loops every vector version must match bit for bit.
#include "verify/values/ref_kernels.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace kernels_detail {
namespace {

void scale_codes_scalar(const uint8_t* __restrict codes, size_t count, float scale, float min,
                        float* __restrict out) {
    for (size_t j = 0; j < count; ++j) out[j] = static_cast<float>(codes[j]) * scale + min;
}

void split_nibbles_scalar(const uint8_t* bytes, size_t byte_count, uint8_t* codes) {
    for (size_t j = 0; j < byte_count; ++j) {
        codes[2 * j] = bytes[j] & 0x0F;
        codes[2 * j + 1] = bytes[j] >> 4;
    }
}

void dequantize_q4_1_scalar(const uint8_t* blocks, size_t block_count, float* out) {
    for (size_t b = 0; b < block_count; ++b) {
        const uint8_t* block = blocks + b * 20;
        const float d = half_bits_to_float(load_u16le(block));
        const float m = half_bits_to_float(load_u16le(block + 2));
        // The codes in a local array first: the scale loop then has no aliasing with the block
        // bytes (the compiler may still vectorise it; this path is the plain C++ one).
        uint8_t codes[32];
        for (size_t j = 0; j < 16; ++j) {
            codes[j] = block[4 + j] & 0x0F;
            codes[j + 16] = block[4 + j] >> 4;
        }
        scale_codes_scalar(codes, 32, d, m, out + b * 32);
    }
}

}  // namespace

const VerifyKernels kScalar{KernelPath::scalar,
                            scale_codes_scalar,
                            split_nibbles_scalar,
                            dequantize_q4_1_scalar,
                            nullptr,
                            nullptr,
                            nullptr,
                            nullptr};

}  // namespace kernels_detail

namespace {

bool cpu_runs(KernelPath path) {
#if defined(__x86_64__)
    if (path == KernelPath::avx2) return __builtin_cpu_supports("avx2");
    return true;  // SSE2 is part of x86-64
#else
    return path == KernelPath::scalar;
#endif
}

const VerifyKernels& table(KernelPath path) {
#if defined(__x86_64__)
    if (path == KernelPath::avx2) return kernels_detail::kAvx2;
    if (path == KernelPath::sse2) return kernels_detail::kSse2;
#endif
    (void)path;
    return kernels_detail::kScalar;
}

KernelPath chosen_path() {
    KernelPath wanted = KernelPath::avx2;
    if (const char* text = std::getenv("REBOX_VERIFY_KERNELS")) {
        const std::string name(text);
        if (name == "scalar") wanted = KernelPath::scalar;
        if (name == "sse2") wanted = KernelPath::sse2;
    }
    if (wanted == KernelPath::avx2 && !cpu_runs(KernelPath::avx2)) wanted = KernelPath::sse2;
    if (wanted == KernelPath::sse2 && !cpu_runs(KernelPath::sse2)) wanted = KernelPath::scalar;
    return wanted;
}

std::atomic<const VerifyKernels*> g_kernels{nullptr};

}  // namespace

const VerifyKernels& kernels() {
    const VerifyKernels* in_use = g_kernels.load(std::memory_order_acquire);
    if (in_use == nullptr) {
        in_use = &table(chosen_path());
        g_kernels.store(in_use, std::memory_order_release);
    }
    return *in_use;
}

KernelPath select_kernels() {
    const VerifyKernels& now = table(chosen_path());
    g_kernels.store(&now, std::memory_order_release);
    return now.path;
}

std::string_view kernel_path_name(KernelPath path) {
    switch (path) {
        case KernelPath::scalar:
            return "scalar";
        case KernelPath::sse2:
            return "sse2";
        case KernelPath::avx2:
            return "avx2";
    }
    return "?";
}

}  // namespace rebox::verify_ref
