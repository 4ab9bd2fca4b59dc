// TQ1_0 and TQ2_0 in lanes (ggml's quantize_row_tq1_0_ref / tq2_0_ref; the imatrix is ignored):
// the lanes are consecutive values of a 256-value block, which are the bytes' positions m (byte m
// packs values m + 32n, or m + 16n), so no transposition is needed.
//
// amax is ggml's MAX(amax, fabsf(x)) = amax > a ? amax : a: a NaN survives only until the next
// element, which depends on where it stands, so a block holding a NaN is quantized by the scalar
// kernel (out of line). Without a NaN, amax is the largest |x| in any order and every v = x * id
// is within [-1 - 2^-22, 1 + 2^-22] (|x| <= d, id = 1/d rounded) except for v = +-inf or NaN (id =
// inf for a tiny d, or 0 * inf when d = inf); there ggml's lroundf gives LONG_MIN (x86's
// conversion), whose low 32 bits + 1 are code 1. So code = 1 + roundf(v) for |v| < 2^23 (half
// away from zero from the exact truncation remainder) and 1 otherwise, and codes are 0, 1 or 2.
// The base-3 byte q = ((c0 * 3 + c1) * 3 + ...) is below 243 and the ceiling division
// (q * 256 + 242) / 243 is exact in floats (the quotient stays >= 1/243 from the next integer,
// the truncating byte store takes its integer part).
#pragma once

#include <cstdint>

#include "quantize/block_kernels.hpp"

namespace rebox::quant::lanes {
namespace {

template <class V>
typename V::F ternary_code(typename V::F v) {
    using F = typename V::F;
    const F one = V::set1(1.f);
    F t = V::trunc_to_int(v);
    const F r = V::sub(v, t);
    t = V::add(t, V::and_(V::le(V::set1(0.5f), r), one));
    t = V::sub(t, V::and_(V::le(r, V::set1(-0.5f)), one));
    return V::select(V::lt(V::abs(v), V::set1(8388608.f)), one, V::add(t, one));
}

// Loads the block, returns false when it holds a NaN; else *amax = the largest |x|.
template <class V>
bool ternary_amax(const float* x, float* amax) {
    using F = typename V::F;
    F nan = V::zero();
    F m = V::zero();
    for (int j = 0; j < 256; j += V::kWidth) {
        const F v = V::loadu(x + j);
        nan = V::or_(nan, V::unordered(v, v));
        m = V::max(V::abs(v), m);
    }
    if (V::any(nan)) return false;
    *amax = V::hmax(m);
    return true;
}

// Bytes m = 0..count-1 of `digits` base-3 codes x[m + n * stride], most significant first, one more
// shift when `shift_one_more`, scaled by ggml's ceiling division.
template <class V>
void ternary_pack(const float* x, int count, int stride, int digits, typename V::F id,
                  uint8_t* out) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    F q[32 / W > 0 ? 32 / W : 1];
    const int nvec = count / W;
    for (int k = 0; k < nvec; ++k) {
        F acc = V::zero();
        for (int n = 0; n < digits; ++n)
            acc = V::add(V::mul(acc, V::set1(3.f)),
                         ternary_code<V>(V::mul(V::loadu(x + W * k + n * stride), id)));
        q[k] = V::div(V::add(V::mul(acc, V::set1(256.f)), V::set1(242.f)), V::set1(243.f));
    }
    V::store_bytes(out, q, nvec);
}

template <class V>
void tq1_0_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float*) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kBlockBytes = 54;  // qs[48], qh[4], d
    const int64_t nblocks = nrows * (n_per_row / 256);
    for (int64_t b = 0; b < nblocks; ++b) {
        const float* x = src + 256 * b;
        uint8_t* y = dst + kBlockBytes * b;
        float d;
        if (!ternary_amax<V>(x, &d)) {
            quantize_tq1_0_ref(x, y, 1);
            continue;
        }
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const F idv = V::set1(id);
        ternary_pack<V>(x, 32, 32, 5, idv, y);             // values 0..159
        ternary_pack<V>(x + 160, 16, 16, 5, idv, y + 32);  // values 160..239
        // qh: byte j packs values 240 + j + 4m (m = 0..3), then one more shift.
        alignas(64) float codes[16];
        for (int k = 0; k < 16 / W; ++k)
            V::store(codes + W * k, ternary_code<V>(V::mul(V::loadu(x + 240 + W * k), idv)));
        for (int j = 0; j < 4; ++j) {
            int q = 0;
            for (int m = 0; m < 4; ++m) q = q * 3 + static_cast<int>(codes[j + 4 * m]);
            q *= 3;
            y[48 + j] = static_cast<uint8_t>((q * 256 + 242) / 243);
        }
        store_ggml_fp16(y + 52, d);
    }
}

template <class V>
void tq2_0_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float*) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kBlockBytes = 66;  // qs[64], d
    const int64_t nblocks = nrows * (n_per_row / 256);
    for (int64_t b = 0; b < nblocks; ++b) {
        const float* x = src + 256 * b;
        uint8_t* y = dst + kBlockBytes * b;
        float d;
        if (!ternary_amax<V>(x, &d)) {
            quantize_tq2_0_ref(x, y, 1);
            continue;
        }
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const F idv = V::set1(id);
        for (int half = 0; half < 2; ++half) {
            // Byte m of the half: code(x[m + 32n]) << 2n, n = 0..3, as c0 + 4 c1 + 16 c2 + 64 c3.
            const float* xh = x + 128 * half;
            F q[32 / W];
            for (int k = 0; k < 32 / W; ++k) {
                F acc = V::zero();
                for (int n = 3; n >= 0; --n)
                    acc = V::add(V::mul(acc, V::set1(4.f)),
                                 ternary_code<V>(V::mul(V::loadu(xh + W * k + 32 * n), idv)));
                q[k] = acc;
            }
            V::store_bytes(y + 32 * half, q, 32 / W);
        }
        store_ggml_fp16(y + 64, d);
    }
}

}  // namespace
}  // namespace rebox::quant::lanes
