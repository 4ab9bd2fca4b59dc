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
    static constexpr bool kRefClamp =
        true;  // MIN(15, (int8_t)(x0 + 0.5f)); Q5_1: (uint8_t)(x0 + 0.5f)
    template <class V>
    static void pack_ref(const typename V::F* codes, uint8_t* block) {
        q4_0_pack<V>(codes, block + 4);
    }
    static void pack(const uint8_t* codes, uint8_t* block) { q4_pack_codes(codes, block + 4); }
};

struct Q51 : AffineSearch<31> {
    static constexpr int kBlockBytes = 24;  // d, m, qh[4], qs[16]
    static constexpr bool kRefClamp = false;
    template <class V>
    static void pack_ref(const typename V::F* codes, uint8_t* block) {
        alignas(32) uint8_t bytes[32];
        codes_to_bytes<V>(codes, bytes);
        pack(bytes, block);
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

// quantize_row_q4_1_ref / quantize_row_q5_1_ref (T = Q41 / Q51).
template <class V, class T>
void qx_1_ref_rows(const float* src, uint8_t* dst, int64_t nblocks) {
    using F = typename V::F;
    constexpr int kVecs = 32 / V::kWidth;
    for (int64_t b = 0; b < nblocks; ++b) {
        const float* x = src + 32 * b;
        uint8_t* block = dst + T::kBlockBytes * b;
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
        const F idv = V::set1(id), minv = V::set1(min), half = V::set1(0.5f), top = V::set1(15.f);
        for (int j = 0; j < kVecs; ++j) {
            v[j] = V::trunc_to_int(V::add(V::mul(V::sub(v[j], minv), idv), half));
            if (T::kRefClamp) v[j] = V::min(v[j], top);
        }
        T::template pack_ref<V>(v, block);
    }
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
