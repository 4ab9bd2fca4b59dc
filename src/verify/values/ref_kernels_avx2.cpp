// verify's AVX2 kernels (this file alone is compiled with -mavx2; never -mfma): 8 codes per
// instruction widened u8 -> u32 (vpmovzxbd), converted to binary32, one multiply and one add per
// value, as the scalar loop. Used only when the CPU reports AVX2. Tails go through the scalar
// kernels; the nibble split stays 128-bit (its byte interleave does not cross lanes). Codes of
// 1..4 bits are also read straight from the lsb0 stream, 8 per 32-bit word (vpsrlvd), and whole
// groups carried as Q4_1 are compared with their blocks in registers, nothing stored: equal codes
// and equal tables of the values a code takes make every value equal (the caller skips the tables
// where each block's d and m widen to its group's own scale and min); 3- and 4-bit codes two blocks
// per instruction, one per 128-bit lane.
#include "verify/values/ref_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "verify/values/ref_kernels_loops.hpp"

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

// The 16 values a code 0..15 takes under one scale and min, as two vectors (codes 0..7, 8..15):
// float(code) * scale + min, the multiply and the add of the scalar loop.
struct ValueTable {
    __m256 low, high;
};
inline ValueTable value_table(__m256 scale8, __m256 min8) {
    const __m256 codes_low = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 codes_high = _mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15);
    return {_mm256_add_ps(_mm256_mul_ps(codes_low, scale8), min8),
            _mm256_add_ps(_mm256_mul_ps(codes_high, scale8), min8)};
}

// Bits that differ between two tables' 32-bit patterns.
inline __m256i table_difference(const ValueTable& a, const ValueTable& b) {
    return _mm256_or_si256(
        _mm256_xor_si256(_mm256_castps_si256(a.low), _mm256_castps_si256(b.low)),
        _mm256_xor_si256(_mm256_castps_si256(a.high), _mm256_castps_si256(b.high)));
}

// Q4_1 blocks' 32 codes back in stream order, 4 bits each (byte k = code 2k | code 2k+1 << 4): the
// 4-bit lsb0 stream those codes make, one block per 128-bit lane. Codes 0..15 are qs's low
// nibbles, 16..31 its high ones.
inline __m256i block_codes_as_4bit_stream(__m256i qs) {
    const __m256i nibble = _mm256_set1_epi8(0x0F), byte = _mm256_set1_epi16(0x00FF);
    const __m256i first = _mm256_and_si256(qs, nibble);                         // codes 0..15
    const __m256i second = _mm256_and_si256(_mm256_srli_epi16(qs, 4), nibble);  // codes 16..31
    // In each 16-bit lane (codes 2k, 2k+1 as bytes): the high byte's code moved up to bits 4..7.
    const __m256i first_pairs =
        _mm256_and_si256(_mm256_or_si256(first, _mm256_srli_epi16(first, 4)), byte);
    const __m256i second_pairs =
        _mm256_and_si256(_mm256_or_si256(second, _mm256_srli_epi16(second, 4)), byte);
    return _mm256_packus_epi16(first_pairs, second_pairs);  // packs within each 128-bit lane
}

// Blocks' 32 codes of a 3-bit stream (each 128-bit lane holds one block's 12 bytes at its low end)
// as the 4-bit stream of the same codes: each 3 bytes (8 codes) into a 32-bit lane (pshufb), then
// halves of 4, 2 and 1 codes moved apart by mask-and-shift steps until code i sits in nibble i.
inline __m256i three_bit_blocks_as_4bit_stream(__m256i bytes) {
    const __m256i triples = _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1,
                                             0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    __m256i x = _mm256_shuffle_epi8(bytes, triples);  // -1: a zero byte
    const auto apart = [](__m256i v, int keep, int move, int by) {
        return _mm256_or_si256(_mm256_and_si256(v, _mm256_set1_epi32(keep)),
                               _mm256_slli_epi32(_mm256_and_si256(v, _mm256_set1_epi32(move)), by));
    };
    x = apart(x, 0x00000FFF, 0x00FFF000, 4);
    x = apart(x, 0x003F003F, 0x0FC00FC0, 2);
    return apart(x, 0x07070707, 0x38383838, 1);
}

// One block's 12 bytes of a 3-bit stream, read exactly (the stream may end right after them), in
// the low lane.
inline __m256i three_bit_block_exact(const uint8_t* stream) {
    int32_t tail;
    __builtin_memcpy(&tail, stream + 8, 4);
    return _mm256_zextsi128_si256(_mm_unpacklo_epi64(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(stream)), _mm_cvtsi32_si128(tail)));
}

inline __m256i load_pair(const uint8_t* low, const uint8_t* high) {
    return _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(high),
                               reinterpret_cast<const __m128i*>(low));
}

// 1- and 2-bit codes of one block against its nibbles, as 32-bit lanes (8 codes per word,
// vpsrlvd): bits set where they differ. Reads 4 bytes at stream + q * Bits, q < 4.
template <unsigned Bits>
inline __m256i narrow_codes_difference(const uint8_t* stream, __m128i qs) {
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m256i shifts = lane_shifts(Bits), mask = _mm256_set1_epi32((1 << Bits) - 1);
    const __m128i low = _mm_and_si128(qs, nibble);
    const __m128i high = _mm_and_si128(_mm_srli_epi16(qs, 4), nibble);
    const __m128i quarters[4] = {low, _mm_unpackhi_epi64(low, low), high,
                                 _mm_unpackhi_epi64(high, high)};
    __m256i differ = _mm256_setzero_si256();
    for (unsigned q = 0; q < 4; ++q) {
        int32_t word;
        __builtin_memcpy(&word, stream + q * Bits, 4);
        const __m256i wanted =
            _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(word), shifts), mask);
        differ =
            _mm256_or_si256(differ, _mm256_xor_si256(wanted, _mm256_cvtepu8_epi32(quarters[q])));
    }
    return differ;
}

// Every block's codes (`Bits` wide, 4 * Bits bytes a block at `stream`) equal its nibbles? 3- and
// 4-bit codes are compared as 4-bit streams two blocks at a time (one per 128-bit lane: a 4-bit
// source's 16 bytes, a 3-bit source's 12 spread to nibbles); the last two blocks read exactly
// their own bytes (a pair's 16-byte loads of 3-bit codes reach 4 bytes past it, which only the
// blocks after it make safe).
template <unsigned Bits>
bool codes_equal(const uint8_t* stream, size_t block_count, const uint8_t* block) {
    __m256i differ = _mm256_setzero_si256();
    if constexpr (Bits == 4 || Bits == 3) {
        constexpr size_t kStride = 4 * Bits;
        size_t k = 0;
        for (; k + 4 <= block_count; k += 2, stream += 2 * kStride, block += 40) {
            const __m256i bytes = load_pair(stream, stream + kStride);
            const __m256i wanted = Bits == 4 ? bytes : three_bit_blocks_as_4bit_stream(bytes);
            const __m256i held = block_codes_as_4bit_stream(load_pair(block + 4, block + 24));
            differ = _mm256_or_si256(differ, _mm256_xor_si256(wanted, held));
        }
        for (; k < block_count; ++k, stream += kStride, block += 20) {
            const __m256i wanted =
                Bits == 4 ? _mm256_zextsi128_si256(
                                _mm_loadu_si128(reinterpret_cast<const __m128i*>(stream)))
                          : three_bit_blocks_as_4bit_stream(three_bit_block_exact(stream));
            const __m256i held = block_codes_as_4bit_stream(_mm256_zextsi128_si256(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 4))));
            differ = _mm256_or_si256(differ, _mm256_xor_si256(wanted, held));
        }
    } else {
        for (size_t k = 0; k < block_count; ++k, stream += 4 * Bits, block += 20)
            differ = _mm256_or_si256(
                differ, narrow_codes_difference<Bits>(
                            stream, _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 4))));
    }
    return _mm256_testz_si256(differ, differ) != 0;
}

bool lsb0_codes_equal_q4_1_avx2(const uint8_t* bytes, unsigned bits, size_t block_count,
                                const uint8_t* blocks) {
    switch (bits) {
        case 1:
            return codes_equal<1>(bytes, block_count, blocks);
        case 2:
            return codes_equal<2>(bytes, block_count, blocks);
        case 3:
            return codes_equal<3>(bytes, block_count, blocks);
        case 4:
            return codes_equal<4>(bytes, block_count, blocks);
    }
    return false;
}

// Every value of a group equals its block's when both sides' codes are equal and so are the two
// tables of the values a code can take (source: float(code) * scale + min; Q4_1: nibble * d + m).
bool lsb0_runs_equal_q4_1_avx2(const uint8_t* bytes, unsigned bits, size_t run_codes,
                               size_t run_count, const float* scales, const float* mins,
                               const uint8_t* blocks) {
    const size_t blocks_per_run = run_codes / 32;
    if (!lsb0_codes_equal_q4_1_avx2(bytes, bits, blocks_per_run * run_count, blocks)) return false;
    __m256i differ = _mm256_setzero_si256();
    const uint8_t* block = blocks;  // Q4_1: d | m | qs[16]
    for (size_t r = 0; r < run_count; ++r) {
        const ValueTable source = value_table(_mm256_set1_ps(scales[r]), _mm256_set1_ps(mins[r]));
        for (size_t k = 0; k < blocks_per_run; ++k, block += 20) {
            const ValueTable held = value_table(_mm256_set1_ps(block_half(block)),
                                                _mm256_set1_ps(block_half(block + 2)));
            differ = _mm256_or_si256(differ, table_difference(source, held));
        }
    }
    return _mm256_testz_si256(differ, differ) != 0;
}

}  // namespace

const VerifyKernels kAvx2{KernelPath::avx2,          scale_codes_by_16<scale_16>,
                          split_nibbles_sse2,        dequantize_q4_1_by_16<scale_16>,
                          scale_lsb0_groups_avx2,    scale_lsb0_runs_avx2,
                          lsb0_runs_equal_q4_1_avx2, lsb0_codes_equal_q4_1_avx2};

}  // namespace rebox::verify_ref::kernels_detail
#endif
