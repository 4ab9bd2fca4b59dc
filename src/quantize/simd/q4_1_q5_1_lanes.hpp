// Q4_1 and Q5_1 in lanes. The ref paths (quantize_row_q{4,1}_1_ref) work element by element inside
// a 32-value block, so the lanes are the block's elements; the imatrix paths
// (quantize_row_q{4,5}_1_impl) run make_qkx3_quants(32, nmax, ..., -0.9f, 0.05f, 36) with one lane
// per block.
#pragma once

#include <cfloat>
#include <cstdint>

#include "quantize/simd/k_quant_blocks.hpp"
#include "quantize/simd/lane_search.hpp"
#include "quantize/simd/legacy_lanes.hpp"

namespace rebox::quant::lanes {
namespace {

// The scale search of quantize_row_q{4,5}_1_impl: make_qkx3_quants(32, nmax, ..., -0.9f, 0.05f,
// 36); the block stores fp16(d) and fp16(-the_min).
template <int kNmaxValue>
struct AffineSearch {
    static constexpr int kNmax = kNmaxValue;
    static constexpr bool kStoresMin = true;
    template <class V>
    static void search(const typename V::F* xt, const typename V::F* w, typename V::F* L, float* d,
                       float* m) {
        typename V::F the_min;
        V::store(d,
                 make_qkx_lanes<V, 32, false, true>(xt, w, kNmax, -0.9f, 0.05f, 36, L, &the_min));
        V::store(m, V::neg(the_min));
    }
};

struct Q41 : AffineSearch<15> {
    static constexpr int kBlockBytes = 20;  // d, m, qs[16]
    // y = (x - min)*id + 0.5f per element: MIN(15, (int8_t)y) (Q5_1: (uint8_t)y) in nibbles.
    template <class V>
    static void pack_ref(const typename V::F* y, uint8_t* block) {
        uint32_t bit4;
        V::store_nibbles(y, 15, block + 4, &bit4);
    }
    static void pack(const uint8_t* codes, uint8_t* block) { q4_pack_codes(codes, block + 4); }
};

struct Q51 : AffineSearch<31> {
    static constexpr int kBlockBytes = 24;  // d, m, qh[4], qs[16]
    template <class V>
    static void pack_ref(const typename V::F* y, uint8_t* block) {
        uint32_t qh;
        V::store_nibbles(y, 0, block + 8, &qh);
        for (int k = 0; k < 4; ++k) block[4 + k] = static_cast<uint8_t>(qh >> (8 * k));
    }
    static void pack(const uint8_t* codes, uint8_t* block) {
        q5_pack_codes(codes, block + 4, block + 8);
    }
};

// The first element equal to `value` (the strict `<` / `>` scans keep the first of equal values;
// only a zero, +0 or -0, can differ in bits from another element of the same value).
template <class V>
float first_equal(const typename V::F* v, const float* x, float value) {
    if (value != 0.f) return value;
    const typename V::F target = V::set1(value);
    for (int j = 0; j < 32 / V::kWidth; ++j)
        if (const int hits = V::any(V::eq(v[j], target)))
            return x[V::kWidth * j + __builtin_ctz(static_cast<unsigned>(hits))];
    return value;
}

// ggml's own scan of one block: the strict `<` / `>` keep the first of equal values and skip a NaN.
inline void block_min_max(const float* x, float* min, float* max) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < 32; ++j) {
        if (x[j] < lo) lo = x[j];
        if (x[j] > hi) hi = x[j];
    }
    *min = lo;
    *max = hi;
}

// The codes of one block from its min and 1/d: (x - min)*id + 0.5f, truncated; Q4_1 takes
// MIN(15, ...), Q5_1 keeps the low byte (a NaN's code is 0 in both, as in the scalar kernels).
template <class V, class T>
void qx_1_ref_codes(const float* x, float min, float id, uint8_t* block) {
    using F = typename V::F;
    constexpr int kVecs = 32 / V::kWidth;
    const F idv = V::set1(id), minv = V::set1(min), half = V::set1(0.5f);
    F y[kVecs];
    for (int j = 0; j < kVecs; ++j)
        y[j] = V::add(V::mul(V::sub(V::loadu(x + V::kWidth * j), minv), idv), half);
    T::template pack_ref<V>(y, block);
}

// One block alone (a row's last blocks when fewer than a lane width remain).
template <class V, class T>
void qx_1_ref_block(const float* x, uint8_t* block) {
    using F = typename V::F;
    constexpr int kVecs = 32 / V::kWidth;
    F v[kVecs];
    F min_lanes = V::set1(FLT_MAX), max_lanes = V::set1(-FLT_MAX);
    for (int j = 0; j < kVecs; ++j) {
        v[j] = V::loadu(x + V::kWidth * j);
        min_lanes = V::min(v[j], min_lanes);  // if (v < min) min = v: a NaN is skipped
        max_lanes = V::max(v[j], max_lanes);
    }
    const float min = first_equal<V>(v, x, V::hmin(min_lanes));
    const float max = first_equal<V>(v, x, V::hmax(max_lanes));
    const float d = (max - min) / static_cast<float>(T::kNmax);
    const float id = d ? 1.0f / d : 0.0f;
    store_half(block, d);
    store_half(block + 2, min);
    qx_1_ref_codes<V, T>(x, min, id, block);
}

// kWidth consecutive blocks at once: each block's min and max over its 32 values as one vector
// (the accumulator second, so a NaN is skipped as ggml's strict scan skips it), the vectors
// reduced across their lanes by one transposing reduction (lane k: block k), and d, id and the
// two fp16 values computed for all blocks in lanes, with ggml's operations per block. A block
// whose min or max is a zero takes ggml's scan (the first of +0 / -0 is kept, and fp16 tells them
// apart).
template <class V, class T>
void qx_1_ref_group(const float* src, uint8_t* dst) {
    using F = typename V::F;
    constexpr int kW = V::kWidth;
    constexpr int kVecs = 32 / kW;
    F mins[kW], maxs[kW];
    for (int k = 0; k < kW; ++k) {
        F lo = V::set1(FLT_MAX), hi = V::set1(-FLT_MAX);
        for (int j = 0; j < kVecs; ++j) {
            const F v = V::loadu(src + 32 * k + kW * j);
            lo = V::min(v, lo);
            hi = V::max(v, hi);
        }
        mins[k] = lo;
        maxs[k] = hi;
    }
    F minv = V::hmin_each(mins), maxv = V::hmax_each(maxs);
    const F zero = V::zero();
    alignas(64) float min_of[kW], max_of[kW], id_of[kW];
    if (V::any(V::or_(V::eq(minv, zero), V::eq(maxv, zero)))) {
        V::store(min_of, minv);
        V::store(max_of, maxv);
        for (int k = 0; k < kW; ++k)
            if (min_of[k] == 0.f || max_of[k] == 0.f)
                block_min_max(src + 32 * k, &min_of[k], &max_of[k]);
        minv = V::load(min_of);
        maxv = V::load(max_of);
    }
    const F d = V::div(V::sub(maxv, minv), V::set1(static_cast<float>(T::kNmax)));
    const F id = V::select(V::eq(d, zero), V::div(V::set1(1.0f), d), zero);  // d ? 1/d : 0
    alignas(64) uint16_t d_half[kW], min_half[kW];
    V::store_halves(d_half, d);
    V::store_halves(min_half, minv);
    V::store(min_of, minv);
    V::store(id_of, id);
    for (int k = 0; k < kW; ++k) {
        uint8_t* block = dst + T::kBlockBytes * k;
        block[0] = static_cast<uint8_t>(d_half[k] & 0xff);
        block[1] = static_cast<uint8_t>(d_half[k] >> 8);
        block[2] = static_cast<uint8_t>(min_half[k] & 0xff);
        block[3] = static_cast<uint8_t>(min_half[k] >> 8);
        qx_1_ref_codes<V, T>(src + 32 * k, min_of[k], id_of[k], block);
    }
}

// quantize_row_q4_1_ref / quantize_row_q5_1_ref (T = Q41 / Q51).
template <class V, class T>
void qx_1_ref_rows(const float* src, uint8_t* dst, int64_t nblocks) {
    int64_t b = 0;
    for (; b + V::kWidth <= nblocks; b += V::kWidth)
        qx_1_ref_group<V, T>(src + 32 * b, dst + T::kBlockBytes * b);
    for (; b < nblocks; ++b) qx_1_ref_block<V, T>(src + 32 * b, dst + T::kBlockBytes * b);
}

// quantize_q4_0 / quantize_q5_0 / quantize_q4_1 / quantize_q5_1 (T = Q40 / Q50 / Q41 / Q51): the
// ref path over all blocks back to back, or the imatrix path per row.
template <class V, class T>
void block32_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
                  const float* imatrix) {
    if (imatrix)
        imatrix_block_rows<V, T>(src, dst, nrows, n_per_row, imatrix);
    else if constexpr (T::kStoresMin)
        qx_1_ref_rows<V, T>(src, dst, nrows * (n_per_row / 32));
    else
        qx_0_ref_rows<V, T>(src, dst, nrows * (n_per_row / 32));
}

}  // namespace
}  // namespace rebox::quant::lanes
