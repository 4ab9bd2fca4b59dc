// verify's SSE2 kernels (the x86-64 baseline): 16 codes per step, widened u8 -> u16 -> u32 by
// unpacking with zero, converted to binary32 (exact for 0..255), then one multiply and one add per
// value, as the scalar loop. Tails go through the scalar kernels.
#include "verify/values/ref_kernels.hpp"

#if defined(__x86_64__)
#include <emmintrin.h>

#include "verify/values/ref_kernels_loops.hpp"

namespace rebox::verify_ref::kernels_detail {
namespace {

// The 16 bytes of `bytes16` as binary32 values * scale + min, stored at out[0..15].
void scale_16(__m128i bytes16, float scale, float min, float* out) {
    const __m128 scale4 = _mm_set1_ps(scale), min4 = _mm_set1_ps(min);
    const __m128i zero = _mm_setzero_si128();
    const __m128i low8 = _mm_unpacklo_epi8(bytes16, zero), high8 = _mm_unpackhi_epi8(bytes16, zero);
    const __m128i words[4] = {_mm_unpacklo_epi16(low8, zero), _mm_unpackhi_epi16(low8, zero),
                              _mm_unpacklo_epi16(high8, zero), _mm_unpackhi_epi16(high8, zero)};
    for (int k = 0; k < 4; ++k) {
        const __m128 product = _mm_mul_ps(_mm_cvtepi32_ps(words[k]), scale4);
        _mm_storeu_ps(out + 4 * k, _mm_add_ps(product, min4));
    }
}

}  // namespace

void split_nibbles_sse2(const uint8_t* bytes, size_t byte_count, uint8_t* codes) {
    const __m128i low_mask = _mm_set1_epi8(0x0F);
    size_t j = 0;
    for (; j + 16 <= byte_count; j += 16) {
        const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + j));
        const __m128i low = _mm_and_si128(packed, low_mask);
        const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), low_mask);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + 2 * j), _mm_unpacklo_epi8(low, high));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + 2 * j + 16),
                         _mm_unpackhi_epi8(low, high));
    }
    kScalar.split_nibbles(bytes + j, byte_count - j, codes + 2 * j);
}

const VerifyKernels kSse2{KernelPath::sse2,
                          scale_codes_by_16<scale_16>,
                          split_nibbles_sse2,
                          dequantize_q4_1_by_16<scale_16>,
                          nullptr,
                          nullptr,
                          nullptr,
                          nullptr};

}  // namespace rebox::verify_ref::kernels_detail
#endif
