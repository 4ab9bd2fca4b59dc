// TQ1_0 and TQ2_0 (256 values, one fp16 scale d = amax, codes -1/0/+1 as round(x/d)): ggml's
// ternary quantizers, which ignore the imatrix. TQ2_0 packs four 2-bit codes per byte (value m +
// 32n of each 128-value half in bits 2n of byte m); TQ1_0 packs five base-3 digits per byte as
// ceil(q * 256 / 243) (first 160 values in 32 bytes, next 80 in 16), the last 16 values four
// per byte with a zero fifth digit. lroundf is libm's (half away from zero), as ggml calls it,
// and amax follows ggml's MAX(a, b) = a > b ? a : b, so a NaN propagates as it does there.
#include <cmath>

#include "quantize/block_kernels.hpp"
#include "quantize/ggml_scalar.hpp"

namespace rebox::quant {

namespace {

constexpr int kQK = 256;

float ternary_amax(const float* x) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) {
        const float a = std::fabs(x[j]);
        amax = amax > a ? amax : a;
    }
    return amax;
}

// -1, 0, 1 -> 0, 1, 2; ggml's `int xi = lroundf(v) + 1` (long, then int: the low 32 bits).
int ternary_code(float v) { return static_cast<int>(::lroundf(v) + 1); }

// `digits` base-3 codes of x[m + n * stride] (n = 0..digits-1), most significant first, then
// scaled to a byte by ggml's ceiling division; all arithmetic in uint8_t as ggml's `q`.
uint8_t pack_trits(const float* x, int stride, int digits, bool shift_one_more, float id) {
    uint8_t q = 0;
    for (int n = 0; n < digits; ++n) {
        q = static_cast<uint8_t>(q * 3);
        q = static_cast<uint8_t>(q + ternary_code(x[n * stride] * id));
    }
    if (shift_one_more) q = static_cast<uint8_t>(q * 3);
    return static_cast<uint8_t>((static_cast<uint16_t>(q) * 256 + (243 - 1)) / 243);
}

}  // namespace

void quantize_tq1_0_ref(const float* x, uint8_t* y, int64_t nblocks) {
    // block_tq1_0: qs[48] (5 codes per byte), qh[4] (4 codes per byte), d.
    for (int64_t i = 0; i < nblocks; ++i, y += 54) {
        const float d = ternary_amax(x);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int m = 0; m < 32; ++m) y[m] = pack_trits(x + m, 32, 5, false, id);
        x += 5 * 32;
        for (int m = 0; m < 16; ++m) y[32 + m] = pack_trits(x + m, 16, 5, false, id);
        x += 5 * 16;
        for (int j = 0; j < 4; ++j) y[48 + j] = pack_trits(x + j, 4, 4, true, id);
        x += 4 * 4;
        store_fp16(y + 52, d);
    }
}

void quantize_tq2_0_ref(const float* x, uint8_t* y, int64_t nblocks) {
    // block_tq2_0: qs[64] (4 codes per byte), d.
    for (int64_t i = 0; i < nblocks; ++i, y += 66) {
        const float d = ternary_amax(x);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < 64; j += 32) {
            for (int m = 0; m < 32; ++m) {
                uint8_t q = 0;
                for (int n = 0; n < 4; ++n)
                    q = static_cast<uint8_t>(q +
                                             ((ternary_code(x[m + n * 32] * id) & 3) << (2 * n)));
                y[j + m] = q;
            }
            x += 4 * 32;
        }
        store_fp16(y + 64, d);
    }
}

}  // namespace rebox::quant
