// verify's AVX2 kernels (this file alone is compiled with -mavx2; never -mfma): 8 codes per
// instruction widened u8 -> u32 (vpmovzxbd), converted to binary32, one multiply and one add per
// value, as the scalar loop. Used only when the CPU reports AVX2. Tails go through the scalar
// kernels; the nibble split stays 128-bit (its byte interleave does not cross lanes).
#include "ref_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ref_kernels_loops.hpp"

namespace rebox::verify_ref::kernels_detail {
namespace {

// The 8 bytes at the low end of `bytes8` as binary32 values * scale + min, stored at out[0..7].
inline void scale_8(__m128i bytes8, __m256 scale, __m256 min, float* out) {
    const __m256 values = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes8));
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_mul_ps(values, scale), min));
}

void scale_16(__m128i bytes16, float scale, float min, float* out) {
    const __m256 scale8 = _mm256_set1_ps(scale), min8 = _mm256_set1_ps(min);
    scale_8(bytes16, scale8, min8, out);
    scale_8(_mm_unpackhi_epi64(bytes16, bytes16), scale8, min8, out + 8);
}

}  // namespace

const VerifyKernels kAvx2{KernelPath::avx2, scale_codes_by_16<scale_16>, split_nibbles_sse2,
                          dequantize_q4_1_by_16<scale_16>};

}  // namespace rebox::verify_ref::kernels_detail
#endif
