// Scalar pieces the K-quant lane kernels share: fp16 storage of d/dmin, the 2-bit code packing of
// Q2_K/Q3_K, the 6-bit scale packing of Q4_K/Q5_K (ggml's get_scale_min_k4 and its inverse) and
// ggml's make_qp_quants, which quantizes the 8 or 16 sub-block scales of an imatrix super-block
// (too small a loop to be worth lanes).
#pragma once

#include <cstdint>
#include <cstring>

#include "format/half.hpp"

namespace rebox::quant::lanes {
namespace {

inline int nearest_int_scalar(float f) {
    const float v = f + 12582912.f;
    int32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

inline void store_half(uint8_t* dst, float value) {
    const uint16_t h = float_to_half(value);
    dst[0] = static_cast<uint8_t>(h & 0xff);
    dst[1] = static_cast<uint8_t>(h >> 8);
}

inline float load_half(const uint8_t* src) {
    return half_to_float(static_cast<uint16_t>(src[0] | (src[1] << 8)));
}

// Sub-block j's 6-bit scale ls and min lm into Q4_K/Q5_K's scales[12].
inline void pack_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t* scales) {
    if (j < 4) {
        scales[j] = ls;
        scales[j + 4] = lm;
    } else {
        scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
        scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
        scales[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
}

inline void unpack_scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Q2_K's and Q3_K's 2-bit codes: per 128-value half j, qs[j/4 + l] holds codes j+l, j+l+32, j+l+64
// and j+l+96 at bits 0, 2, 4, 6.
inline void pack_2bit_codes(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < 256; j += 128)
        for (int l = 0; l < 32; ++l)
            qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                                 (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

// ggml's make_qp_quants(n, nmax, x, L, quant_weights), operation for operation.
inline float make_qp_quants_scalar(int n, int nmax, const float* x, uint8_t* L, const float* qw) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = max > x[i] ? max : x[i];
    if (max < 1e-15f) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = static_cast<float>(nmax) / max;
    for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(nearest_int_scalar(iscale * x[i]));
    const float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - scale * static_cast<float>(L[i]);
        best_mse += qw[i] * diff * diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        const float iscale_is = (0.1f * static_cast<float>(is) + static_cast<float>(nmax)) / max;
        const float scale_is = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int_scalar(iscale_is * x[i]);
            l = nmax < l ? nmax : l;
            const float diff = x[i] - scale_is * static_cast<float>(l);
            mse += qw[i] * diff * diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = nearest_int_scalar(iscale * x[i]);
        l = nmax < l ? nmax : l;
        L[i] = static_cast<uint8_t>(l);
        sumlx += qw[i] * x[i] * static_cast<float>(l);
        suml2 += qw[i] * static_cast<float>(l) * static_cast<float>(l);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = qw[i];
            const float li = static_cast<float>(L[i]);
            float slx = sumlx - w * x[i] * li;
            float sl2 = suml2 - w * li * li;
            if (slx > 0 && sl2 > 0) {
                int new_l = nearest_int_scalar(x[i] * sl2 / slx);
                new_l = nmax < new_l ? nmax : new_l;
                if (new_l != L[i]) {
                    const float nl = static_cast<float>(new_l);
                    slx += w * x[i] * nl;
                    sl2 += w * nl * nl;
                    if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<uint8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

}  // namespace
}  // namespace rebox::quant::lanes
