// Q3_K in lanes (ggml's quantize_row_q3_K_ref and quantize_row_q3_K_impl): lane k runs the scale
// search of sub-block k (16 values) of a super-block (make_q3_quants' coordinate descent in the ref
// path, make_qx_quants with the imatrix weights otherwise), then requantizes it. The imatrix path's
// search over the 16 sub-block scales runs one super-block per lane, 16 super-blocks at a time.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "quantize/simd/k_quant_blocks.hpp"
#include "quantize/simd/lane_search.hpp"

namespace rebox::quant::lanes {
namespace {

constexpr int kQ3KBlockBytes = 110;  // hmask[32], qs[64], scales[12], d

// make_q3_quants(16, nmax = 4, x, L, do_rmse = true), ggml's Q3_K ref search, on lanes: each lane
// one 16-value sub-block, its codes l in [-4, 3] and its sums updated element by element in
// ggml's order. Split in two so lanes do not wait for the slowest: the initial codes and the first
// try for every sub-block (q3_first_try), then the later tries (up to 4, q3_more_tries) only for
// the sub-blocks whose first try changed a code, gathered into full lanes. A try that changes
// nothing ends ggml's loop; a further try of that unchanged state computes the same values and
// changes nothing again, so a lane that stopped may keep running beside the others. Each
// element's step is a chain of dependent operations through sumlx / suml2 (a division among
// them), so kChains vectors of lanes run interleaved, element by element, and one chain's latency
// is spent on the others' work.
template <class V, int kChains>
typename V::F q3_try(const typename V::F (*x)[16], typename V::F (*L)[16], typename V::F* sumlx,
                     typename V::F* suml2, typename V::F* changed) {
    using F = typename V::F;
    const F lo = V::set1(-4.f), hi = V::set1(3.f), zero = V::zero();
    F any = V::zero();
    for (int c = 0; c < kChains; ++c) changed[c] = V::zero();
    for (int i = 0; i < 16; ++i) {
        for (int c = 0; c < kChains; ++c) {
            const F w = V::mul(x[c][i], x[c][i]), wx = V::mul(w, x[c][i]);
            F slx = V::sub(sumlx[c], V::mul(wx, L[c][i]));
            const F positive = V::gt(slx, zero);
            F sl2 = V::sub(suml2[c], V::mul(V::mul(w, L[c][i]), L[c][i]));
            const F new_l = nearest_int_clamped<V>(V::div(V::mul(x[c][i], sl2), slx), lo, hi);
            const F differs = V::zero_where(V::eq(new_l, L[c][i]), positive);
            slx = V::add(slx, V::mul(wx, new_l));
            sl2 = V::add(sl2, V::mul(V::mul(w, new_l), new_l));
            const F better =
                V::gt(V::mul(V::mul(slx, slx), suml2[c]), V::mul(V::mul(sumlx[c], sumlx[c]), sl2));
            const F take = V::and_(differs, V::and_(V::gt(sl2, zero), better));
            L[c][i] = V::select(take, L[c][i], new_l);
            sumlx[c] = V::select(take, sumlx[c], slx);
            suml2[c] = V::select(take, suml2[c], sl2);
            changed[c] = V::or_(changed[c], take);
        }
    }
    for (int c = 0; c < kChains; ++c) any = V::or_(any, changed[c]);
    return any;
}

// The initial codes and sums and the first try; all_zero: the lanes whose largest |x| is below
// GROUP_MAX_EPS (ggml returns 0 and codes 0 for them at once; their lanes run and are masked
// later). changed: the lanes the first try changed (all-zero lanes excluded).
template <class V, int kChains>
void q3_first_try(const typename V::F (*x)[16], typename V::F (*L)[16], typename V::F* sumlx,
                  typename V::F* suml2, typename V::F* all_zero, typename V::F* changed) {
    using F = typename V::F;
    const F lo = V::set1(-4.f), hi = V::set1(3.f);
    for (int c = 0; c < kChains; ++c) {
        F max;
        all_zero[c] = largest_magnitude<V, 16>(x[c], &max);
        const F iscale = V::div(V::set1(-4.f), max);  // -nmax / max
        sumlx[c] = V::zero();
        suml2[c] = V::zero();
        for (int i = 0; i < 16; ++i) {
            const F w = V::mul(x[c][i], x[c][i]);
            L[c][i] = nearest_int_clamped<V>(V::mul(iscale, x[c][i]), lo, hi);
            sumlx[c] = V::add(sumlx[c], V::mul(V::mul(w, x[c][i]), L[c][i]));
            suml2[c] = V::add(suml2[c], V::mul(V::mul(w, L[c][i]), L[c][i]));
        }
    }
    q3_try<V, kChains>(x, L, sumlx, suml2, changed);
    for (int c = 0; c < kChains; ++c) changed[c] = V::zero_where(all_zero[c], changed[c]);
}

// Tries 2 to 5, until a try changes no lane.
template <class V, int kChains>
void q3_more_tries(const typename V::F (*x)[16], typename V::F (*L)[16], typename V::F* sumlx,
                   typename V::F* suml2) {
    typename V::F changed[kChains];
    for (int itry = 1; itry < 5; ++itry)
        if (!V::any(q3_try<V, kChains>(x, L, sumlx, suml2, changed))) break;
}

// The 6-bit scale l (0..63) of sub-block j into Q3_K's scales[12].
inline void q3_k_pack_scale(int j, int l, uint8_t* scales) {
    if (j < 8)
        scales[j] = static_cast<uint8_t>(l & 0xF);
    else
        scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
    l >>= 4;
    scales[j % 4 + 8] |= static_cast<uint8_t>(l << (2 * (j / 4)));
}

inline int q3_k_unpack_scale(int j, const uint8_t* scales) {
    int8_t sc = static_cast<int8_t>(j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4);
    sc = static_cast<int8_t>((sc | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
    return sc;
}

// out[16 * s + i] = in[16 * i + s]: four rounds of interleaving row r with row r + 8 (SSE2).
inline void transpose_16x16_bytes(const uint8_t* in, uint8_t* out) {
    __m128i r[16], t[16];
    for (int i = 0; i < 16; ++i)
        r[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(in + 16 * i));
    for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < 8; ++i) {
            t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
            t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
        }
        for (int i = 0; i < 16; ++i) r[i] = t[i];
    }
    for (int i = 0; i < 16; ++i) _mm_store_si128(reinterpret_cast<__m128i*>(out + 16 * i), r[i]);
}

// Codes 0..7: the high bit of code j goes to bit j/32 of hmask[j%32] (the block is zeroed), the
// low two bits to qs. SSE2 byte compares, 32 codes (one hmask bit) at a time.
inline void q3_k_pack_codes(uint8_t* L, uint8_t* block) {
    const __m128i three = _mm_set1_epi8(3), four = _mm_set1_epi8(4);
    __m128i low_half = _mm_setzero_si128(), high_half = _mm_setzero_si128();
    for (int g = 0; g < 8; ++g) {
        __m128i* codes = reinterpret_cast<__m128i*>(L + 32 * g);
        const __m128i a = _mm_loadu_si128(codes), b = _mm_loadu_si128(codes + 1);
        const __m128i a_high = _mm_cmpgt_epi8(a, three), b_high = _mm_cmpgt_epi8(b, three);
        const __m128i bit = _mm_set1_epi8(static_cast<char>(1 << g));
        low_half = _mm_or_si128(low_half, _mm_and_si128(a_high, bit));
        high_half = _mm_or_si128(high_half, _mm_and_si128(b_high, bit));
        _mm_storeu_si128(codes, _mm_sub_epi8(a, _mm_and_si128(a_high, four)));
        _mm_storeu_si128(codes + 1, _mm_sub_epi8(b, _mm_and_si128(b_high, four)));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(block), low_half);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(block + 16), high_half);
    pack_2bit_codes(L, block + 32);
}

// The codes of a super-block whose scales and d are packed (xt, Lt: its kGroups lane groups with
// the search's codes): requantized with each sub-block's d, then packed.
template <class V>
void q3_k_requantize_pack(const typename V::F (*xt)[16], typename V::F (*Lt)[16], uint8_t* block) {
    constexpr int W = V::kWidth;
    constexpr int kGroups = 16 / W;
    const uint8_t* packed_scales = block + 96;
    const float d = load_half(block + 108);
    alignas(64) uint8_t rows[256];  // rows[16 * i + s]: code i of sub-block s
    for (int g = 0; g < kGroups; ++g) {
        alignas(64) float d_lane[W];
        for (int k = 0; k < W; ++k)
            d_lane[k] = d * static_cast<float>(q3_k_unpack_scale(W * g + k, packed_scales));
        requantize_symmetric<V, 16>(xt[g], V::load(d_lane), -4.f, 3.f, 4.f, Lt[g]);
        alignas(64) uint8_t bytes[16 * W];  // (uint8_t)(int)L, bytes[W * i + k]
        V::store_bytes(bytes, Lt[g], 16);
        for (int i = 0; i < 16; ++i) std::memcpy(rows + 16 * i + W * g, bytes + W * i, W);
    }
    alignas(32) uint8_t L[256];
    transpose_16x16_bytes(rows, L);
    q3_k_pack_codes(L, block);
}

// The rest of a ref-path super-block once its 16 sub-blocks' searches are done (xt, Lt: its
// kGroups lane groups; scales: the 16 sub-block scales).
template <class V>
void q3_k_finish(const typename V::F (*xt)[16], typename V::F (*Lt)[16], const float* scales,
                 uint8_t* block) {
    std::memset(block, 0, kQ3KBlockBytes);
    uint8_t* packed_scales = block + 96;
    float max_scale = 0, amax = 0;
    for (int j = 0; j < 16; ++j) {
        const float scale = std::fabs(scales[j]);
        if (scale > amax) amax = scale, max_scale = scales[j];
    }
    if (max_scale != 0.f) {
        const float iscale = -32.f / max_scale;
        for (int j = 0; j < 16; ++j) {
            int8_t l = static_cast<int8_t>(nearest_int_scalar(iscale * scales[j]));
            l = static_cast<int8_t>((l < -32 ? -32 : (31 < l ? 31 : l)) + 32);
            q3_k_pack_scale(j, l, packed_scales);
        }
        store_half(block + 108, 1 / iscale);
    }
    q3_k_requantize_pack<V>(xt, Lt, block);
}

// The sub-block searches of up to kQ3KBatch super-blocks of ggml's ref path, one lane per
// sub-block: codes and sums kept transposed in memory (chain c = 16 / W * super-block + group:
// lane k of vector i holds element i of sub-block W * c + k); the values are read from the source.
constexpr int kQ3KBatch = 16;

template <class V>
struct Q3KRefBatch {
    static constexpr int W = V::kWidth;
    static constexpr int kChains = 16 * kQ3KBatch / W;
    alignas(64) float L[kChains][16][W];
    alignas(64) float sumlx[kChains][W], suml2[kChains][W], all_zero[kChains][W];
    alignas(64) float changed[kChains][W];
};

// Chains c0 .. c0 + kC - 1 of the batch: transposed in, initial pass and first try, stored.
template <class V, int kC>
void q3_k_first_tries(const float* src, Q3KRefBatch<V>& b, int c0) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    F xt[kC][16], Lt[kC][16], sx[kC], s2[kC], az[kC], ch[kC];
    for (int c = 0; c < kC; ++c) V::transpose16(src + 16 * W * (c0 + c), xt[c]);
    q3_first_try<V, kC>(xt, Lt, sx, s2, az, ch);
    for (int c = 0; c < kC; ++c) {
        for (int i = 0; i < 16; ++i) {
            V::store(b.L[c0 + c][i], Lt[c][i]);
        }
        V::store(b.sumlx[c0 + c], sx[c]);
        V::store(b.suml2[c0 + c], s2[c]);
        V::store(b.all_zero[c0 + c], az[c]);
        V::store(b.changed[c0 + c], ch[c]);
    }
}

// Four chains of lanes per step on the later tries.
constexpr int kQ3KMoreChains = 4;

// The sub-blocks whose first try changed a code, gathered kQ3KMoreChains * W at a time into
// lanes (unused lanes hold zeros: slx = 0 is not positive, so they never change), tries 2..5,
// and scattered back.
template <class V>
void q3_k_later_tries(const float* src, Q3KRefBatch<V>& b, int nchains) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kC = kQ3KMoreChains;
    int pending[16 * kQ3KBatch];
    int npending = 0;
    for (int c = 0; c < nchains; ++c)
        for (int k = 0; k < W; ++k)
            if (b.changed[c][k] != 0.f) pending[npending++] = c * W + k;  // all-ones: a NaN
    for (int p0 = 0; p0 < npending; p0 += kC * W) {
        const int n = npending - p0 < kC * W ? npending - p0 : kC * W;
        alignas(64) float x[kC][16][W], L[kC][16][W], sx[kC][W], s2[kC][W];
        for (int s = n; s < kC * W; ++s) {  // unused lanes: zeros
            for (int i = 0; i < 16; ++i) x[s / W][i][s % W] = L[s / W][i][s % W] = 0.f;
            sx[s / W][s % W] = s2[s / W][s % W] = 0.f;
        }
        for (int s = 0; s < n; ++s) {
            const int c = pending[p0 + s] / W, k = pending[p0 + s] % W;
            for (int i = 0; i < 16; ++i) {
                x[s / W][i][s % W] = src[16 * (W * c + k) + i];
                L[s / W][i][s % W] = b.L[c][i][k];
            }
            sx[s / W][s % W] = b.sumlx[c][k];
            s2[s / W][s % W] = b.suml2[c][k];
        }
        F xt[kC][16], Lt[kC][16], sumlx[kC], suml2[kC];
        for (int c = 0; c < kC; ++c) {
            for (int i = 0; i < 16; ++i) {
                xt[c][i] = V::load(x[c][i]);
                Lt[c][i] = V::load(L[c][i]);
            }
            sumlx[c] = V::load(sx[c]);
            suml2[c] = V::load(s2[c]);
        }
        q3_more_tries<V, kC>(xt, Lt, sumlx, suml2);
        for (int c = 0; c < kC; ++c) {
            for (int i = 0; i < 16; ++i) V::store(L[c][i], Lt[c][i]);
            V::store(sx[c], sumlx[c]);
            V::store(s2[c], suml2[c]);
        }
        for (int s = 0; s < n; ++s) {
            const int c = pending[p0 + s] / W, k = pending[p0 + s] % W;
            for (int i = 0; i < 16; ++i) b.L[c][i][k] = L[s / W][i][s % W];
            b.sumlx[c][k] = sx[s / W][s % W];
            b.suml2[c][k] = s2[s / W][s % W];
        }
    }
}

// quantize_row_q3_K_ref on nsuper (<= kQ3KBatch) consecutive super-blocks.
template <class V>
void q3_k_ref_batch(const float* src, uint8_t* out, int nsuper, Q3KRefBatch<V>& b) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kGroups = 16 / W;
    const int nchains = nsuper * kGroups;
    int c = 0;
    for (; c + kQ3KMoreChains <= nchains; c += kQ3KMoreChains)
        q3_k_first_tries<V, kQ3KMoreChains>(src, b, c);
    for (; c < nchains; c += kGroups) q3_k_first_tries<V, kGroups>(src, b, c);
    q3_k_later_tries<V>(src, b, nchains);
    const F zero = V::zero(), offset = V::set1(4.f);
    for (int s = 0; s < nsuper; ++s) {
        F xt[kGroups][16], Lt[kGroups][16];
        alignas(64) float scales[16];
        for (int g = 0; g < kGroups; ++g) {
            const int ch = kGroups * s + g;
            const F az = V::load(b.all_zero[ch]);
            V::transpose16(src + 16 * W * ch, xt[g]);
            for (int i = 0; i < 16; ++i) {
                Lt[g][i] = V::zero_where(az, V::add(V::load(b.L[ch][i]), offset));  // L + nmax
            }
            const F sx = V::load(b.sumlx[ch]), s2 = V::load(b.suml2[ch]);
            // suml2 > 0 ? sumlx / suml2 : 0; 0 for an all-zero group
            V::store(scales + W * g,
                     V::zero_where(az, V::select(V::gt(s2, zero), zero, V::div(sx, s2))));
        }
        q3_k_finish<V>(xt, Lt, scales, out + kQ3KBlockBytes * s);
    }
}

// make_qx_quants(16, nmax, x, L, 1, w) on kC vectors of lanes at once (as make_qx_lanes): the
// 18 further tries' sums are chains of dependent adds, so the chains run interleaved, element by
// element, and each lane's accept is a select (a try no lane takes leaves every lane as it was).
template <class V, int kC>
void make_qx_chains(const typename V::F (*x)[16], const typename V::F (*w)[16], int nmax,
                    typename V::F (*L)[16], typename V::F* scale) {
    using F = typename V::F;
    const F lo = V::set1(static_cast<float>(-nmax)), hi = V::set1(static_cast<float>(nmax - 1));
    const F offset = V::set1(static_cast<float>(nmax)), zero = V::zero();
    F max[kC], all_zero[kC], wx[kC][16], sumlx[kC], suml2[kC], best[kC];
    for (int c = 0; c < kC; ++c) {
        all_zero[c] = largest_magnitude<V, 16>(x[c], &max[c]);
        for (int i = 0; i < 16; ++i) wx[c][i] = V::mul(w[c][i], x[c][i]);
        sumlx[c] = zero, suml2[c] = zero;
    }
    F iscale[kC];
    for (int c = 0; c < kC; ++c) iscale[c] = V::div(V::set1(static_cast<float>(-nmax)), max[c]);
    for (int i = 0; i < 16; ++i)
        for (int c = 0; c < kC; ++c) {
            const F l = nearest_int_clamped<V>(V::mul(iscale[c], x[c][i]), lo, hi);
            L[c][i] = V::add(l, offset);
            sumlx[c] = V::add(sumlx[c], V::mul(wx[c][i], l));
            suml2[c] = V::add(suml2[c], V::mul(V::mul(w[c][i], l), l));
        }
    for (int c = 0; c < kC; ++c) {
        scale[c] = V::zero_where(V::eq(suml2[c], zero), V::div(sumlx[c], suml2[c]));
        best[c] = V::mul(scale[c], sumlx[c]);
    }
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        const F step = V::set1(-(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)));
        F Laux[kC][16];
        for (int c = 0; c < kC; ++c) {
            iscale[c] = V::div(step, max[c]);
            sumlx[c] = zero, suml2[c] = zero;
        }
        for (int i = 0; i < 16; ++i)
            for (int c = 0; c < kC; ++c) {
                const F l = nearest_int_clamped<V>(V::mul(iscale[c], x[c][i]), lo, hi);
                Laux[c][i] = l;
                sumlx[c] = V::add(sumlx[c], V::mul(wx[c][i], l));
                suml2[c] = V::add(suml2[c], V::mul(V::mul(w[c][i], l), l));
            }
        for (int c = 0; c < kC; ++c) {
            const F take = V::and_(V::gt(suml2[c], zero),
                                   V::gt(V::mul(sumlx[c], sumlx[c]), V::mul(best[c], suml2[c])));
            for (int i = 0; i < 16; ++i)
                L[c][i] = V::select(take, L[c][i], V::add(Laux[c][i], offset));
            const F this_scale = V::div(sumlx[c], suml2[c]);
            scale[c] = V::select(take, scale[c], this_scale);
            best[c] = V::select(take, best[c], V::mul(this_scale, sumlx[c]));
        }
    }
    for (int c = 0; c < kC; ++c) {
        for (int i = 0; i < 16; ++i) L[c][i] = V::zero_where(all_zero[c], L[c][i]);
        scale[c] = V::zero_where(all_zero[c], scale[c]);
    }
}

// quantize_row_q3_K_impl with quant_weights on up to kQ3KBatch super-blocks of one row: the
// sub-block searches kQ3KMoreChains vectors of lanes at a time (lane k of chain c: sub-block
// W * c + k of the batch), then the 16-scale search with one super-block per lane, then the
// requantization. sum_x2: each super-block's sum of x^2 in index order.
template <class V>
struct Q3KImatrixBatch {
    static constexpr int W = V::kWidth;
    static constexpr int kChains = 16 * kQ3KBatch / W;
    alignas(64) float L[kChains][16][W];
    alignas(64) float scales[kQ3KBatch][16], sw[kQ3KBatch][16];
};

template <class V, int kC>
void q3_k_imatrix_searches(const float* src, const float* imatrix, const float* sum_x2,
                           Q3KImatrixBatch<V>& b, int c0) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kGroups = 16 / W;
    F xt[kC][16], w[kC][16], Lt[kC][16], scale[kC];
    for (int c = 0; c < kC; ++c) {
        const int ch = c0 + c, s = ch / kGroups;
        V::transpose16(src + 16 * W * ch, xt[c]);
        F qw[16];
        V::transpose16(imatrix + 16 * W * ch, qw);
        const F sigma2 = V::set1(2 * sum_x2[s] / 256);
        F sumw = V::zero();
        for (int i = 0; i < 16; ++i) {
            w[c][i] = V::mul(qw[i], V::sqrt(V::add(sigma2, V::mul(xt[c][i], xt[c][i]))));
            sumw = V::add(sumw, w[c][i]);
        }
        V::store(b.sw[s] + W * (ch % kGroups), sumw);
    }
    make_qx_chains<V, kC>(xt, w, 4, Lt, scale);
    for (int c = 0; c < kC; ++c) {
        const int ch = c0 + c;
        for (int i = 0; i < 16; ++i) V::store(b.L[ch][i], Lt[c][i]);
        V::store(b.scales[ch / kGroups] + W * (ch % kGroups), scale[c]);
    }
}

template <class V>
void q3_k_imatrix_batch(const float* src, const float* imatrix, uint8_t* out, int nsuper,
                        Q3KImatrixBatch<V>& b) {
    using F = typename V::F;
    constexpr int W = V::kWidth;
    constexpr int kGroups = 16 / W;
    float sum_x2[kQ3KBatch];
    for (int s0 = 0; s0 < nsuper; s0 += W) {
        const int lanes = nsuper - s0 < W ? nsuper - s0 : W;
        const float* bases[W];
        for (int k = 0; k < lanes; ++k) bases[k] = src + 256 * (s0 + k);
        sum_squares_lanes<V>(bases, lanes, 256, sum_x2 + s0);
    }
    const int nchains = nsuper * kGroups;
    int c = 0;
    for (; c + kQ3KMoreChains <= nchains; c += kQ3KMoreChains)
        q3_k_imatrix_searches<V, kQ3KMoreChains>(src, imatrix, sum_x2, b, c);
    for (; c < nchains; c += kGroups) q3_k_imatrix_searches<V, kGroups>(src, imatrix, sum_x2, b, c);
    // make_qx_quants(16, 32, scales, Ls, 1, sw), super-block s0 + k in lane k (unused lanes:
    // zero scales, an all-zero group).
    for (int s = nsuper; s < kQ3KBatch; ++s)
        for (int j = 0; j < 16; ++j) b.scales[s][j] = b.sw[s][j] = 0.f;
    constexpr int kScaleChains = kQ3KBatch / W;
    F xs[kScaleChains][16], ws[kScaleChains][16], ls[kScaleChains][16], d[kScaleChains];
    for (int g = 0; g < kScaleChains; ++g) {
        V::transpose16(&b.scales[W * g][0], xs[g]);
        V::transpose16(&b.sw[W * g][0], ws[g]);
    }
    make_qx_chains<V, kScaleChains>(xs, ws, 32, ls, d);
    alignas(64)
        uint8_t Ls[kScaleChains][16 * W];  // Ls[g][W * j + k]: scale j of super-block W g + k
    alignas(64) float d_all[kQ3KBatch];
    for (int g = 0; g < kScaleChains; ++g) {
        V::store_bytes(Ls[g], ls[g], 16);
        V::store(d_all + W * g, d[g]);
    }
    for (int s = 0; s < nsuper; ++s) {
        uint8_t* block = out + kQ3KBlockBytes * s;
        std::memset(block, 0, kQ3KBlockBytes);
        for (int j = 0; j < 16; ++j) q3_k_pack_scale(j, Ls[s / W][W * j + s % W], block + 96);
        store_half(block + 108, d_all[s]);
        F xt[kGroups][16], Lt[kGroups][16];
        for (int g = 0; g < kGroups; ++g) {
            const int ch = kGroups * s + g;
            V::transpose16(src + 16 * W * ch, xt[g]);
            for (int i = 0; i < 16; ++i) Lt[g][i] = V::load(b.L[ch][i]);
        }
        q3_k_requantize_pack<V>(xt, Lt, block);
    }
}

template <class V>
void q3_k_rows(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
               const float* imatrix) {
    if (imatrix) {
        const int64_t blocks_per_row = n_per_row / 256;
        Q3KImatrixBatch<V> batch;
        for (int64_t row = 0; row < nrows; ++row)
            for (int64_t b = 0; b < blocks_per_row; b += kQ3KBatch) {
                const int n = static_cast<int>(blocks_per_row - b < kQ3KBatch ? blocks_per_row - b
                                                                              : kQ3KBatch);
                q3_k_imatrix_batch<V>(src + row * n_per_row + 256 * b, imatrix + 256 * b,
                                      dst + (row * blocks_per_row + b) * kQ3KBlockBytes, n, batch);
            }
        return;
    }
    // ggml's ref path runs the super-blocks of all rows back to back.
    const int64_t total = nrows * (n_per_row / 256);
    Q3KRefBatch<V> batch;
    for (int64_t b = 0; b < total; b += kQ3KBatch) {
        const int n = static_cast<int>(total - b < kQ3KBatch ? total - b : kQ3KBatch);
        q3_k_ref_batch<V>(src + 256 * b, dst + kQ3KBlockBytes * b, n, batch);
    }
}

}  // namespace
}  // namespace rebox::quant::lanes
