// verify's AVX2 kernels (this file alone is compiled with -mavx2; never -mfma): 8 codes per
// instruction widened u8 -> u32 (vpmovzxbd), converted to binary32, one multiply and one add per
// value, as the scalar loop. Used only when the CPU reports AVX2. Tails go through the scalar
// kernels; the nibble split stays 128-bit (its byte interleave does not cross lanes). Codes of
// 1..4 bits are also read straight from the lsb0 stream, 8 per 32-bit word (vpsrlvd), and whole
// groups carried as Q4_1 are compared with their blocks in registers (xor of the two values' bit
// patterns, or-ed across the chunk), nothing stored.
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

// Per group: its 32-bit word in all 8 lanes, lane i shifted right by i * bits (vpsrlvd) and
// masked to one code, then converted, multiplied and offset as in scale_8.
inline void scale_lsb0_8s(const uint8_t* bytes, unsigned bits, size_t group_count, __m256 scale8,
                          __m256 min8, __m256i shifts, __m256i mask, float* out) {
    for (size_t k = 0; k < group_count; ++k) {
        int32_t word;
        __builtin_memcpy(&word, bytes + k * bits, 4);  // x86-64: little-endian
        const __m256i codes =
            _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(word), shifts), mask);
        const __m256 values = _mm256_cvtepi32_ps(codes);
        _mm256_storeu_ps(out + 8 * k, _mm256_add_ps(_mm256_mul_ps(values, scale8), min8));
    }
}

inline __m256i lane_shifts(unsigned bits) {
    return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                              _mm256_set1_epi32(static_cast<int>(bits)));
}

void scale_lsb0_groups_avx2(const uint8_t* bytes, unsigned bits, size_t group_count, float scale,
                            float min, float* out) {
    scale_lsb0_8s(bytes, bits, group_count, _mm256_set1_ps(scale), _mm256_set1_ps(min),
                  lane_shifts(bits), _mm256_set1_epi32((1 << bits) - 1), out);
}

void scale_lsb0_runs_avx2(const uint8_t* bytes, unsigned bits, size_t run_codes, size_t run_count,
                          const float* scales, const float* mins, float* out) {
    const __m256i shifts = lane_shifts(bits), mask = _mm256_set1_epi32((1 << bits) - 1);
    const size_t eights = run_codes / 8;
    for (size_t r = 0; r < run_count; ++r)
        scale_lsb0_8s(bytes + r * eights * bits, bits, eights, _mm256_set1_ps(scales[r]),
                      _mm256_set1_ps(mins[r]), shifts, mask, out + r * run_codes);
}

// The 8 source values of the aligned 8-code group at `bytes` (its 32-bit word), as scale_lsb0_8s.
inline __m256 source_8(const uint8_t* bytes, __m256i shifts, __m256i mask, __m256 scale8,
                       __m256 min8) {
    int32_t word;
    __builtin_memcpy(&word, bytes, 4);
    const __m256i codes =
        _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(word), shifts), mask);
    return _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(codes), scale8), min8);
}

// 8 of a Q4_1 block's values: nibbles (one per byte, the low 8 bytes of `nibbles8`) * d + m.
inline __m256 block_8(__m128i nibbles8, __m256 d8, __m256 m8) {
    const __m256 values = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(nibbles8));
    return _mm256_add_ps(_mm256_mul_ps(values, d8), m8);
}

// Bits that differ between two vectors' 32-bit patterns.
inline __m256i differing_bits(__m256 a, __m256 b) {
    return _mm256_xor_si256(_mm256_castps_si256(a), _mm256_castps_si256(b));
}

bool lsb0_runs_equal_q4_1_avx2(const uint8_t* bytes, unsigned bits, size_t run_codes,
                               size_t run_count, const float* scales, const float* mins,
                               const uint8_t* blocks) {
    const __m256i shifts = lane_shifts(bits), mask = _mm256_set1_epi32((1 << bits) - 1);
    const __m128i low_mask = _mm_set1_epi8(0x0F);
    const size_t blocks_per_run = run_codes / 32;
    __m256i differ = _mm256_setzero_si256();
    for (size_t r = 0; r < run_count; ++r) {
        const __m256 scale8 = _mm256_set1_ps(scales[r]), min8 = _mm256_set1_ps(mins[r]);
        for (size_t k = 0; k < blocks_per_run; ++k) {
            // Source: block values 0..31 are four aligned 8-code groups of the stream.
            const uint8_t* words = bytes + (r * blocks_per_run + k) * 4 * bits;
            // Q4_1: d | m | qs[16]; value j < 16 is qs[j]'s low nibble, 16 + j its high one.
            const uint8_t* block = blocks + (r * blocks_per_run + k) * 20;
            const __m256 d8 = _mm256_set1_ps(block_half(block));
            const __m256 m8 = _mm256_set1_ps(block_half(block + 2));
            const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 4));
            const __m128i low = _mm_and_si128(qs, low_mask);
            const __m128i high = _mm_and_si128(_mm_srli_epi16(qs, 4), low_mask);
            const __m128i quarters[4] = {low, _mm_unpackhi_epi64(low, low), high,
                                         _mm_unpackhi_epi64(high, high)};
            for (unsigned q = 0; q < 4; ++q)
                differ = _mm256_or_si256(
                    differ, differing_bits(source_8(words + q * bits, shifts, mask, scale8, min8),
                                           block_8(quarters[q], d8, m8)));
        }
    }
    return _mm256_testz_si256(differ, differ) != 0;
}

}  // namespace

const VerifyKernels kAvx2{KernelPath::avx2,         scale_codes_by_16<scale_16>,
                          split_nibbles_sse2,       dequantize_q4_1_by_16<scale_16>,
                          scale_lsb0_groups_avx2,   scale_lsb0_runs_avx2,
                          lsb0_runs_equal_q4_1_avx2};

}  // namespace rebox::verify_ref::kernels_detail
#endif
