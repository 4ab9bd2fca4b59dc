// Byte layouts shared by several K-quant super-blocks (256 values): the 2-bit code packing of
// Q2_K/Q3_K, the 6-bit scale/min packing of Q4_K/Q5_K (get_scale_min_k4) and Q3_K's 6-bit
// scales, and the super-block sigma2 of the imatrix paths.
#pragma once

#include <cstdint>

namespace rebox::quant {

inline constexpr int kSuperBlock = 256;  // ggml's QK_K

// qs[j/4 + l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6 for j in {0, 128}.
inline void pack_2bit_codes(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < kSuperBlock; j += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                                 (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
        }
    }
}

// Q4_K/Q5_K scales[12]: 8 six-bit scales and 8 six-bit mins.
inline void pack_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t* scales) {
    if (j < 4) {
        scales[j] = ls;
        scales[j + 4] = lm;
    } else {
        scales[j + 4] = static_cast<uint8_t>((ls & 0xf) | ((lm & 0xf) << 4));
        scales[j - 4] = static_cast<uint8_t>(scales[j - 4] | ((ls >> 4) << 6));
        scales[j] = static_cast<uint8_t>(scales[j] | ((lm >> 4) << 6));
    }
}

inline void unpack_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = static_cast<uint8_t>((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Q3_K scales[12]: 16 six-bit values (already offset by 32), low nibbles then 2-bit highs.
inline void pack_q3_k_scale(int j, int l, uint8_t* scales) {
    if (j < 8) {
        scales[j] = static_cast<uint8_t>(l & 0xf);
    } else {
        scales[j - 8] = static_cast<uint8_t>(scales[j - 8] | ((l & 0xf) << 4));
    }
    l >>= 4;
    scales[j % 4 + 8] = static_cast<uint8_t>(scales[j % 4 + 8] | (l << (2 * (j / 4))));
}

// The signed 6-bit scale of sub-block j (value - 32).
inline int unpack_q3_k_scale(int j, const uint8_t* scales) {
    const int low = j < 8 ? scales[j] & 0xf : scales[j - 8] >> 4;
    return (low | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

// Sum of x^2 over a super-block, in index order.
inline float super_block_sum_x2(const float* x) {
    float sum_x2 = 0;
    for (int l = 0; l < kSuperBlock; ++l) sum_x2 += x[l] * x[l];
    return sum_x2;
}

}  // namespace rebox::quant
