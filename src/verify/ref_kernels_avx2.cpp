// verify's AVX2 kernels (this file alone is compiled with -mavx2; never -mfma): 8 codes per
// instruction widened u8 -> u32 (vpmovzxbd), converted to binary32, one multiply and one add per
// value, as the scalar loop. Used only when the CPU reports AVX2. Tails go through the scalar
// kernels; the nibble split stays 128-bit (its byte interleave does not cross lanes).
#include "ref_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ref_half.hpp"

namespace rebox::verify_ref::kernels_detail {
namespace {

// The 8 bytes at the low end of `bytes8` as binary32 values * scale + min, stored at out[0..7].
inline void scale_8(__m128i bytes8, __m256 scale, __m256 min, float* out) {
    const __m256 values = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes8));
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_mul_ps(values, scale), min));
}

inline void scale_16(__m128i bytes16, __m256 scale, __m256 min, float* out) {
    scale_8(bytes16, scale, min, out);
    scale_8(_mm_unpackhi_epi64(bytes16, bytes16), scale, min, out + 8);
}

void scale_codes_avx2(const uint8_t* codes, size_t count, float scale, float min, float* out) {
    const __m256 scale8 = _mm256_set1_ps(scale), min8 = _mm256_set1_ps(min);
    size_t j = 0;
    for (; j + 16 <= count; j += 16)
        scale_16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + j)), scale8, min8,
                 out + j);
    kScalar.scale_codes(codes + j, count - j, scale, min, out + j);
}

void dequantize_q4_1_avx2(const uint8_t* blocks, size_t block_count, float* out) {
    const __m128i low_mask = _mm_set1_epi8(0x0F);
    for (size_t b = 0; b < block_count; ++b) {
        const uint8_t* block = blocks + b * 20;
        const __m256 d = _mm256_set1_ps(half_bits_to_float(load_u16le(block)));
        const __m256 m = _mm256_set1_ps(half_bits_to_float(load_u16le(block + 2)));
        const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 4));
        scale_16(_mm_and_si128(qs, low_mask), d, m, out + b * 32);
        scale_16(_mm_and_si128(_mm_srli_epi16(qs, 4), low_mask), d, m, out + b * 32 + 16);
    }
}

}  // namespace

const VerifyKernels kAvx2{KernelPath::avx2, scale_codes_avx2, split_nibbles_sse2,
                          dequantize_q4_1_avx2};

}  // namespace rebox::verify_ref::kernels_detail
#endif
