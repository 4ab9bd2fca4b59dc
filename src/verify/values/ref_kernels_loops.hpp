// The loops verify's SSE2 and AVX2 kernels share, written once over a 16-value step: Scale16(bytes,
// scale, min, out) stores float(bytes[j]) * scale + min for the 16 bytes of a 128-bit register.
// Each kernel file instantiates them with its own step (from an anonymous namespace, so the
// SSE2 and AVX2 instantiations stay apart, each compiled with its file's flags). Everything here
// has internal linkage, and the AVX2 file calls no shared inline function (the fp16 table is read
// directly): an AVX2-compiled copy of a shared inline function could be the one the linker keeps
// for every caller, which a CPU without AVX2 could not run.
#pragma once

#include <emmintrin.h>

#include <cstddef>
#include <cstdint>

#include "verify/values/ref_half.hpp"
#include "verify/values/ref_kernels.hpp"

namespace rebox::verify_ref::kernels_detail {
namespace {

// Block field `at` (fp16, little-endian) widened by verify's table.
inline float block_half(const uint8_t* at) {
    return verify_ref::detail::half_to_float_table[at[0] | (at[1] << 8)];
}

using Scale16 = void (*)(__m128i bytes16, float scale, float min, float* out);

template <Scale16 Step>
inline void scale_codes_by_16(const uint8_t* codes, size_t count, float scale, float min,
                              float* out) {
    size_t j = 0;
    for (; j + 16 <= count; j += 16)
        Step(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + j)), scale, min, out + j);
    kScalar.scale_codes(codes + j, count - j, scale, min, out + j);
}

// Q4_1 blocks: d | m | qs[16]; values 0..15 are the low nibbles, 16..31 the high ones.
template <Scale16 Step>
inline void dequantize_q4_1_by_16(const uint8_t* blocks, size_t block_count, float* out) {
    const __m128i low_mask = _mm_set1_epi8(0x0F);
    for (size_t b = 0; b < block_count; ++b) {
        const uint8_t* block = blocks + b * 20;
        const float d = block_half(block);
        const float m = block_half(block + 2);
        const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 4));
        Step(_mm_and_si128(qs, low_mask), d, m, out + b * 32);
        Step(_mm_and_si128(_mm_srli_epi16(qs, 4), low_mask), d, m, out + b * 32 + 16);
    }
}

}  // namespace
}  // namespace rebox::verify_ref::kernels_detail
