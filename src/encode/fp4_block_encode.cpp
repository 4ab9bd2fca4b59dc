// The FP4 repack: a nibble reorder plus a scale byte copy (fp4_block_encode.hpp).
#include "encode/fp4_block_encode.hpp"

#include <cmath>

namespace rebox {
namespace {

constexpr float kE2M1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// Code k of the source stream (element 2i low nibble of byte i).
uint8_t code_at(const Fp4View& v, uint64_t k) {
    const uint8_t byte = v.codes[k / 2];
    return k % 2 == 0 ? byte & 0x0f : byte >> 4;
}

}  // namespace

float e2m1_value(uint8_t code) { return kE2M1[code & 0x0f]; }

float e8m0_value(uint8_t e) { return std::ldexp(1.0f, int{e} - 127); }

float e4m3_value(uint8_t byte) {
    const int exponent = (byte >> 3) & 0x0f;
    const int mantissa = byte & 0x07;
    if (exponent == 0) return std::ldexp(static_cast<float>(mantissa), -9);
    return std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
}

void encode_mxfp4(const Fp4View& v, uint64_t first_block, size_t n_blocks, uint8_t* out) {
    for (size_t b = 0; b < n_blocks; ++b, out += kMxfp4BlockBytes) {
        const uint64_t block = first_block + b;
        const uint64_t base = block * kMxfp4BlockValues;
        out[0] = v.scales[block];
        for (uint64_t j = 0; j < 16; ++j)
            out[1 + j] =
                static_cast<uint8_t>(code_at(v, base + j) | code_at(v, base + j + 16) << 4);
    }
}

void encode_nvfp4(const Fp4View& v, uint64_t first_block, size_t n_blocks, uint8_t* out) {
    for (size_t b = 0; b < n_blocks; ++b, out += kNvfp4BlockBytes) {
        const uint64_t block = first_block + b;
        for (uint64_t s = 0; s < 4; ++s) {
            const uint64_t base = block * kNvfp4BlockValues + 16 * s;
            out[s] = v.scales[block * 4 + s];
            for (uint64_t j = 0; j < 8; ++j)
                out[4 + 8 * s + j] =
                    static_cast<uint8_t>(code_at(v, base + j) | code_at(v, base + j + 8) << 4);
        }
    }
}

void dequantize_fp4_f32(const Fp4View& v, uint64_t first, size_t count, float* out) {
    for (size_t i = 0; i < count; ++i) {
        const uint64_t k = first + i;
        const uint8_t scale = v.scales[k / static_cast<uint64_t>(v.group)];
        const float d = v.kind == Fp4Kind::mxfp4 ? e8m0_value(scale) : e4m3_value(scale);
        out[i] = kE2M1[code_at(v, k)] * d;
    }
}

}  // namespace rebox
