// Q8_0, Q4_0 and Q5_0 in lanes: ggml's quantize_row_q8_0_ref / q4_0_ref / q5_0_ref work element by
// element inside a 32-value block, so the lanes are the block's elements (the block maximum is the
// same for any order of a max over non-NaN values; a block with a NaN takes ggml's sequential max).
// Q4_0 / Q5_0 with an imatrix (quantize_row_q{4,5}_0_impl) run make_qx_quants with one lane per
// block.
#pragma once

#include <emmintrin.h>

#include <cmath>
#include <cstdint>

#include "quantize/simd/k_quant_blocks.hpp"
#include "quantize/simd/lane_search.hpp"

namespace rebox::quant::lanes {
namespace {

constexpr int kQ8_0BlockBytes = 34;  // d, qs[32]

// roundf(v) (half away from zero) as a float, from the truncation: v - trunc(v) is exact.
template <class V>
typename V::F round_half_away(typename V::F v) {
    const typename V::F t = V::trunc_to_int(v);
    const typename V::F frac = V::sub(v, t);
    const typename V::F one = V::set1(1.f);
    const typename V::F up = V::and_(V::le(V::set1(0.5f), frac), one);
    const typename V::F down = V::and_(V::le(frac, V::set1(-0.5f)), one);
    return V::sub(V::add(t, up), down);
}

template <class V>
void q8_0_rows(const float* src, uint8_t* dst, int64_t nblocks) {
    using F = typename V::F;
    constexpr int kVecs = 32 / V::kWidth;
    for (int64_t b = 0; b < nblocks; ++b) {
        const float* x = src + 32 * b;
        uint8_t* block = dst + kQ8_0BlockBytes * b;
        F v[kVecs];
        F amax_lanes = V::zero(), nan = V::zero();
        for (int j = 0; j < kVecs; ++j) {
            v[j] = V::loadu(x + V::kWidth * j);
            amax_lanes = V::max(V::abs(v[j]), amax_lanes);
            nan = V::or_(nan, V::unordered(v[j], v[j]));
        }
        float amax = V::hmax(amax_lanes);
        if (V::any(nan)) {  // ggml's MAX(amax, fabsf(v)) in order: a NaN is kept only until the
                            // next value
            amax = 0.0f;
            for (int j = 0; j < 32; ++j) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]);
        }
        const float d = amax / 127;
        const float id = d ? 1.0f / d : 0.0f;
        store_half(block, d);
        const F idv = V::set1(id);
        for (int j = 0; j < kVecs; ++j) v[j] = round_half_away<V>(V::mul(v[j], idv));
        V::store_bytes(block + 2, v, kVecs);
    }
}

// quantize_q8_0 (the imatrix is ignored, as ggml ignores it).
template <class V>
void q8_0_all_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float*) {
    q8_0_rows<V>(src, dst, nrows * (n_per_row / 32));
}

// Packs codes q (as floats, 0..15) of one 32-value block: qs[j] = q[j] | q[j+16] << 4.
template <class V>
void q4_0_pack(const typename V::F* q, uint8_t* qs) {
    constexpr int kHalf = 16 / V::kWidth;
    typename V::F bytes[kHalf];
    for (int j = 0; j < kHalf; ++j) bytes[j] = V::add(q[j], V::mul(q[j + kHalf], V::set1(16.f)));
    V::store_bytes(qs, bytes, kHalf);
}

// 4-bit codes (as bytes) of one block: qs[j] = code j | code j+16 << 4.
inline void q4_pack_codes(const uint8_t* codes, uint8_t* qs) {
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(codes[j] | (codes[j + 16] << 4));
}

// 5-bit codes (as bytes) of one block: low nibbles into qs as above, bit 4 of code j at bit j of
// the little-endian uint32 qh. Byte logic on SSE2 (the x86-64 baseline): shifting each 16-bit
// word left by 3 moves every byte's bit 4 to its bit 7, which movemask gathers; any byte value
// packs as ggml's scalar loop packs it.
inline void q5_pack_codes(const uint8_t* codes, uint8_t* qh_bytes, uint8_t* qs) {
    const __m128i first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes));
    const __m128i second = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + 16));
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i packed =
        _mm_or_si128(_mm_and_si128(first, nibble),
                     _mm_slli_epi16(_mm_and_si128(second, nibble), 4));  // no carry: nibbles
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), packed);
    const uint32_t qh = static_cast<uint32_t>(_mm_movemask_epi8(_mm_slli_epi16(first, 3))) |
                        static_cast<uint32_t>(_mm_movemask_epi8(_mm_slli_epi16(second, 3))) << 16;
    for (int k = 0; k < 4; ++k) qh_bytes[k] = static_cast<uint8_t>(qh >> (8 * k));
}

// Codes as floats (whole numbers) to bytes, as C's float -> integer conversion.
template <class V>
void codes_to_bytes(const typename V::F* codes, uint8_t* bytes) {
    V::store_bytes(bytes, codes, 32 / V::kWidth);
}

// The scale search of quantize_row_q{4,5}_0_impl: make_qx_quants(32, nmax, ...), no min.
template <int kNmaxValue>
struct SymmetricSearch {
    static constexpr int kNmax = kNmaxValue;
    static constexpr bool kStoresMin = false;
    template <class V>
    static void search(const typename V::F* xt, const typename V::F* w, typename V::F* L, float* d,
                       float*) {
        V::store(d, make_qx_lanes<V, 32>(xt, w, kNmax, L));
    }
};

struct Q40 : SymmetricSearch<8> {           // make_qx_quants(32, 8, ...); ref: d = max / -8
    static constexpr int kBlockBytes = 18;  // d, qs[16]
    static constexpr float kRefOffset = 8.5f;
    static constexpr float kRefTop = 15.f;
    template <class V>
    static void pack_ref(const typename V::F* codes, uint8_t* block) {
        q4_0_pack<V>(codes, block + 2);
    }
    static void pack(const uint8_t* codes, uint8_t* block) { q4_pack_codes(codes, block + 2); }
};

struct Q50 : SymmetricSearch<16> {
    static constexpr int kBlockBytes = 22;  // d, qh[4], qs[16]
    static constexpr float kRefOffset = 16.5f;
    static constexpr float kRefTop = 31.f;
    template <class V>
    static void pack_ref(const typename V::F* codes, uint8_t* block) {
        alignas(32) uint8_t bytes[32];
        codes_to_bytes<V>(codes, bytes);
        pack(bytes, block);
    }
    static void pack(const uint8_t* codes, uint8_t* block) {
        q5_pack_codes(codes, block + 2, block + 6);
    }
};

// quantize_row_q4_0_ref / quantize_row_q5_0_ref (T = Q40 / Q50).
template <class V, class T>
void qx_0_ref_rows(const float* src, uint8_t* dst, int64_t nblocks) {
    using F = typename V::F;
    constexpr int kVecs = 32 / V::kWidth;
    for (int64_t b = 0; b < nblocks; ++b) {
        const float* x = src + 32 * b;
        uint8_t* block = dst + T::kBlockBytes * b;
        F v[kVecs];
        F amax_lanes = V::zero();
        for (int j = 0; j < kVecs; ++j) {
            v[j] = V::loadu(x + V::kWidth * j);
            amax_lanes = V::max(
                V::abs(v[j]), amax_lanes);  // a NaN lane keeps the old value, as `amax < fabsf(v)`
        }
        const float amax = V::hmax(amax_lanes);
        float max = 0.0f;
        if (amax > 0) {  // the first element of largest magnitude, with its sign
            const F target = V::set1(amax);
            for (int j = 0; j < kVecs; ++j) {
                if (const int hits = V::any(V::eq(V::abs(v[j]), target))) {
                    max = x[V::kWidth * j + __builtin_ctz(static_cast<unsigned>(hits))];
                    break;
                }
            }
        }
        const float d = max / static_cast<float>(-T::kNmax);
        const float id = d ? 1.0f / d : 0.0f;
        store_half(block, d);
        const F idv = V::set1(id), half = V::set1(T::kRefOffset), top = V::set1(T::kRefTop);
        for (int j = 0; j < kVecs; ++j)
            v[j] = V::min(V::trunc_to_int(V::add(V::mul(v[j], idv), half)), top);
        T::template pack_ref<V>(v, block);
    }
}

// The imatrix paths of Q4_0/Q5_0/Q4_1/Q5_1 per row: sigma2 = sum(x^2)/n_per_row over the whole row
// (W rows at a time in lanes), then W blocks of the row at a time with weights
// qw*sqrt(sigma2 + x^2): Group::quantize(xt, w, lanes, first block, dst) gets them transposed.
template <class V, class Group>
void for_imatrix_block_groups(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
                              const float* imatrix) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    const int64_t blocks_per_row = n_per_row / 32;
    for (int64_t r0 = 0; r0 < nrows; r0 += W) {
        const int rows = static_cast<int>(nrows - r0 < W ? nrows - r0 : W);
        const float* bases[W];
        for (int k = 0; k < rows; ++k) bases[k] = src + (r0 + k) * n_per_row;
        float sum_x2[W];
        sum_squares_lanes<V>(bases, rows, n_per_row, sum_x2);
        for (int k = 0; k < rows; ++k) {
            const float* x = bases[k];
            const F sigma2 = V::set1(sum_x2[k] / static_cast<float>(n_per_row));
            for (int64_t b0 = 0; b0 < blocks_per_row; b0 += W) {
                const int lanes =
                    static_cast<int>(blocks_per_row - b0 < W ? blocks_per_row - b0 : W);
                F xt[32], qw[32], w[32];
                transpose_in<V, 32>(x + 32 * b0, lanes, xt);
                transpose_in<V, 32>(imatrix + 32 * b0, lanes, qw);
                for (int i = 0; i < 32; ++i)
                    w[i] = V::mul(qw[i], V::sqrt(V::add(sigma2, V::mul(xt[i], xt[i]))));
                Group::quantize(xt, w, lanes, (r0 + k) * blocks_per_row + b0, dst);
            }
        }
    }
}

// The imatrix paths of the 32-value types: T's search per block (one lane per block), then fp16(d),
// for Q4_1/Q5_1 also fp16(m), and the packed codes.
template <class V, class T>
struct ImatrixBlockGroup {
    using F = typename V::F;
    static void quantize(const F* xt, const F* w, int lanes, int64_t block0, uint8_t* dst) {
        constexpr int W = V::kWidth;
        F L[32];
        alignas(32) float d[W], m[W];
        T::template search<V>(xt, w, L, d, m);
        alignas(32) uint8_t codes[32 * W];
        transpose_codes_out<V, 32>(L, lanes, codes);
        for (int k = 0; k < lanes; ++k) {
            uint8_t* block = dst + T::kBlockBytes * (block0 + k);
            store_half(block, d[k]);
            if (T::kStoresMin) store_half(block + 2, m[k]);
            T::pack(codes + 32 * k, block);
        }
    }
};

template <class V, class T>
void imatrix_block_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
                        const float* imatrix) {
    for_imatrix_block_groups<V, ImatrixBlockGroup<V, T>>(src, dst, nrows, n_per_row, imatrix);
}

}  // namespace
}  // namespace rebox::quant::lanes
