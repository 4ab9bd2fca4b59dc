// The two FP4 readings of ref_fp4.hpp: the checkpoint's (from the OCP / NVIDIA definitions) and
// ggml's (from its dequantizers).
#include "verify/values/ref_fp4.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace rebox::verify_ref {
namespace {

// E2M1 from its bits: s eem -> (-1)^s * (ee == 0 ? m * 0.5 : (1 + m/2) * 2^(ee-1)).
float e2m1(uint8_t code) {
    const int exponent = (code >> 1) & 3, mantissa = code & 1;
    const float magnitude =
        exponent == 0 ? 0.5f * static_cast<float>(mantissa)
                      : std::ldexp(1.0f + 0.5f * static_cast<float>(mantissa), exponent - 1);
    return (code & 8) ? -magnitude : magnitude;
}

// An E4M3 byte with bit 7 clear and not 0x7F (the source index refused the others).
float e4m3(uint8_t byte) {
    const int exponent = byte >> 3, mantissa = byte & 7;
    if (exponent == 0) return std::ldexp(static_cast<float>(mantissa) / 8.0f, -6);
    return std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
}

// ggml: kvalues_fp4 (E2M1 doubled), GGML_E8M0_TO_FP32_HALF, ggml_ue4m3_to_fp32.
constexpr float kDoubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
float e8m0_half(uint8_t e) { return std::ldexp(1.0f, int{e} - 128); }

}  // namespace

float ue4m3_half(uint8_t x) {
    if (x == 0 || x == 0x7f) return 0.0f;
    const int exponent = (x >> 3) & 0xf, mantissa = x & 7;
    const float value = exponent == 0 ? static_cast<float>(mantissa) * std::ldexp(1.0f, -9)
                                      : (1.0f + static_cast<float>(mantissa) / 8.0f) *
                                            std::ldexp(1.0f, exponent - 7);
    return value * 0.5f;
}

void expected_from_fp4(const Fp4Source& source, uint64_t first, std::span<float> out,
                       bool plus_zero) {
    // The 16 E2M1 values once (ggml reads -0 as +0), then one scale per run of a group.
    float values[16];
    for (uint8_t code = 0; code < 16; ++code)
        values[code] = plus_zero && code == 8 ? 0.0f : e2m1(code);
    // Every scale byte's value, computed once per process from the definitions above.
    static const std::array<float, 256> kE4m3 = [] {
        std::array<float, 256> table{};
        for (int byte = 0; byte < 256; ++byte) table[byte] = e4m3(static_cast<uint8_t>(byte));
        return table;
    }();
    static const std::array<float, 256> kE8m0 = [] {
        std::array<float, 256> table{};
        for (int byte = 0; byte < 256; ++byte) table[byte] = std::ldexp(1.0f, byte - 127);
        return table;
    }();
    const std::array<float, 256>& scales = source.nvfp4 ? kE4m3 : kE8m0;
    const uint64_t group = source.group;
    for (size_t i = 0; i < out.size();) {
        const uint64_t k = first + i;
        const float scale = scales[source.scales[k / group]];
        const size_t run =
            static_cast<size_t>(std::min<uint64_t>(group - k % group, out.size() - i));
        for (size_t j = 0; j < run; ++j) {
            const uint64_t at = k + j;
            const uint8_t byte = source.codes[at / 2];
            out[i + j] = values[at % 2 == 0 ? byte & 0xf : byte >> 4] * scale;
        }
        i += run;
    }
}

void dequantize_mxfp4(std::span<const uint8_t> blocks, std::span<float> out) {
    for (size_t b = 0; b * 32 < out.size(); ++b) {
        const uint8_t* block = blocks.data() + 17 * b;
        const float d = e8m0_half(block[0]);
        for (size_t j = 0; j < 16; ++j) {
            out[32 * b + j] = kDoubled[block[1 + j] & 0xf] * d;
            out[32 * b + j + 16] = kDoubled[block[1 + j] >> 4] * d;
        }
    }
}

void dequantize_nvfp4(std::span<const uint8_t> blocks, std::span<float> out) {
    for (size_t b = 0; b * 64 < out.size(); ++b) {
        const uint8_t* block = blocks.data() + 36 * b;
        for (size_t s = 0; s < 4; ++s) {
            const float d = ue4m3_half(block[s]);
            for (size_t j = 0; j < 8; ++j) {
                const uint8_t q = block[4 + 8 * s + j];
                out[64 * b + 16 * s + j] = kDoubled[q & 0xf] * d;
                out[64 * b + 16 * s + j + 8] = kDoubled[q >> 4] * d;
            }
        }
    }
}

}  // namespace rebox::verify_ref
