// verify's re-quantizer for the ternary and 1/2-bit types, written per value: each value's code
// first, then where it lands. TQ1_0 / TQ2_0 (256 values, fp16 d = the block's largest |x| taken
// as ggml's MAX macro takes it, code lroundf(x / d) + 1 in 0..2); Q1_0 (128 values, fp16 d = the
// mean |x| summed in order, bit set for x >= 0); Q2_0 (64 values, fp16 d = amax, code
// round(x / d) + 1 clamped to 0..3). TQ1_0 stores five codes per byte as the base-3 number
// c0 c1 c2 c3 c4 (c0 most significant) scaled to ceil(n * 256 / 243), in three groups: values
// 0..159 (byte v % 32, digit v / 32), 160..239 (byte 32 + w % 16, digit w / 16) and 240..255
// (byte 48 + w % 4, digit w / 4, four digits and a zero fifth). Importance is ignored.
#include <cmath>
#include <cstring>

#include "verify/quantized/ref_half_round.hpp"
#include "verify/quantized/ref_quant_search.hpp"
#include "verify/quantized/ref_quantize_blocks.hpp"

namespace rebox::verify_ref::quant_blocks {

namespace {

// The block's scale as ggml's `amax = MAX(amax, fabsf(v))` gives it (a NaN is kept until a later
// value replaces it) and its inverse (0 for a zero scale).
void ternary_scale(const float* x, float* d, float* inverse) {
    float amax = 0.0f;
    for (int v = 0; v < 256; ++v) {
        const float magnitude = std::fabs(x[v]);
        if (!(amax > magnitude)) amax = magnitude;
    }
    *d = amax;
    *inverse = amax != 0.0f ? 1.0f / amax : 0.0f;
}

// lroundf(x / d) + 1 as ggml stores it in an int: the low 32 bits of the long.
int64_t ternary_code(float value, float inverse) {
    return static_cast<int32_t>(static_cast<uint32_t>(std::lround(value * inverse) + 1));
}

// A base-3 number of up to five codes (most significant first), reduced mod 256 as ggml's uint8_t
// accumulator wraps, then ceil(n * 256 / 243) kept in a byte.
uint8_t trit_byte(const int64_t* codes, int count, bool pad_fifth) {
    int64_t n = 0;
    for (int i = 0; i < count; ++i) n = n * 3 + codes[i];
    if (pad_fifth) n *= 3;
    const auto wrapped = static_cast<uint32_t>(n & 0xff);
    return static_cast<uint8_t>((wrapped * 256 + 242) / 243);
}

}  // namespace

void tq1_0(const float* x, uint8_t* out) {
    float d = 0, inverse = 0;
    ternary_scale(x, &d, &inverse);
    int64_t codes[256];
    for (int v = 0; v < 256; ++v) codes[v] = ternary_code(x[v], inverse);
    int64_t digits[5];
    for (int byte = 0; byte < 32; ++byte) {
        for (int digit = 0; digit < 5; ++digit) digits[digit] = codes[digit * 32 + byte];
        out[byte] = trit_byte(digits, 5, false);
    }
    for (int byte = 0; byte < 16; ++byte) {
        for (int digit = 0; digit < 5; ++digit) digits[digit] = codes[160 + digit * 16 + byte];
        out[32 + byte] = trit_byte(digits, 5, false);
    }
    for (int byte = 0; byte < 4; ++byte) {
        for (int digit = 0; digit < 4; ++digit) digits[digit] = codes[240 + digit * 4 + byte];
        out[48 + byte] = trit_byte(digits, 4, true);
    }
    store_u16le(out + 52, float_to_half_bits(d));
}

void tq2_0(const float* x, uint8_t* out) {
    float d = 0, inverse = 0;
    ternary_scale(x, &d, &inverse);
    std::memset(out, 0, 64);
    for (int v = 0; v < 256; ++v) {
        const int within = v % 128;
        const int byte = 32 * (v / 128) + within % 32;
        const int shift = 2 * (within / 32);
        const auto code = static_cast<uint32_t>(ternary_code(x[v], inverse)) & 3u;
        out[byte] = static_cast<uint8_t>(out[byte] + (code << shift));
    }
    store_u16le(out + 64, float_to_half_bits(d));
}

void q1_0(const float* x, uint8_t* out) {
    float sum = 0.0f;
    for (int v = 0; v < 128; ++v) sum += std::fabs(x[v]);
    store_u16le(out, float_to_half_bits(sum / 128.0f));
    std::memset(out + 2, 0, 16);
    for (int v = 0; v < 128; ++v)
        if (x[v] >= 0.0f) out[2 + v / 8] = static_cast<uint8_t>(out[2 + v / 8] | (1u << (v % 8)));
}

void q2_0(const float* x, uint8_t* out) {
    float amax = 0.0f;
    for (int v = 0; v < 64; ++v)
        if (std::fabs(x[v]) > amax) amax = std::fabs(x[v]);
    const float inverse = amax > 0.0f ? 1.0f / amax : 0.0f;
    store_u16le(out, float_to_half_bits(amax));
    std::memset(out + 2, 0, 16);
    for (int v = 0; v < 64; ++v) {
        // (int)roundf as x86 converts (INT32_MIN for NaN), + 1, clamped to the 2-bit range.
        const int64_t code =
            static_cast<int64_t>(quant_search::truncate_like_x86(std::round(x[v] * inverse))) + 1;
        const auto clamped = static_cast<uint32_t>(code < 0 ? 0 : code > 3 ? 3 : code);
        out[2 + v / 4] = static_cast<uint8_t>(out[2 + v / 4] | (clamped << (2 * (v % 4))));
    }
}

}  // namespace rebox::verify_ref::quant_blocks
