// ggml block dequantization to fp32 (one rounding per value, as ggml-quants.c computes it:
// q*d or q*d + m in float; the build forbids FMA contraction).
#include "gguf_tools/dequantize.hpp"

#include <cstring>

#include "format/half.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox {
namespace {

constexpr size_t kQK = 32;  // elements per block of every Q type here

uint16_t load_u16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
uint32_t load_u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// block_q4_0: d (fp16), qs[16]; low nibbles are elements 0..15, high nibbles 16..31, minus 8.
void q4_0(const uint8_t* b, float* y) {
    const float d = half_to_float(load_u16(b));
    const uint8_t* qs = b + 2;
    for (size_t j = 0; j < kQK / 2; ++j) {
        y[j] = static_cast<float>((qs[j] & 0x0F) - 8) * d;
        y[j + kQK / 2] = static_cast<float>((qs[j] >> 4) - 8) * d;
    }
}

// block_q4_1: d, m (fp16), qs[16]; q*d + m.
void q4_1(const uint8_t* b, float* y) {
    const float d = half_to_float(load_u16(b));
    const float m = half_to_float(load_u16(b + 2));
    const uint8_t* qs = b + 4;
    for (size_t j = 0; j < kQK / 2; ++j) {
        y[j] = static_cast<float>(qs[j] & 0x0F) * d + m;
        y[j + kQK / 2] = static_cast<float>(qs[j] >> 4) * d + m;
    }
}

// The fifth bit of element j (bit j of qh) and of element j+16 (bit j+16).
int high_bit(uint32_t qh, size_t bit) { return static_cast<int>((qh >> bit) & 1u) << 4; }

// block_q5_0: d (fp16), qh[4], qs[16]; 5-bit codes minus 16.
void q5_0(const uint8_t* b, float* y) {
    const float d = half_to_float(load_u16(b));
    const uint32_t qh = load_u32(b + 2);
    const uint8_t* qs = b + 6;
    for (size_t j = 0; j < kQK / 2; ++j) {
        y[j] = static_cast<float>(((qs[j] & 0x0F) | high_bit(qh, j)) - 16) * d;
        y[j + kQK / 2] = static_cast<float>(((qs[j] >> 4) | high_bit(qh, j + 16)) - 16) * d;
    }
}

// block_q5_1: d, m (fp16), qh[4], qs[16]; q*d + m.
void q5_1(const uint8_t* b, float* y) {
    const float d = half_to_float(load_u16(b));
    const float m = half_to_float(load_u16(b + 2));
    const uint32_t qh = load_u32(b + 4);
    const uint8_t* qs = b + 8;
    for (size_t j = 0; j < kQK / 2; ++j) {
        y[j] = static_cast<float>((qs[j] & 0x0F) | high_bit(qh, j)) * d + m;
        y[j + kQK / 2] = static_cast<float>((qs[j] >> 4) | high_bit(qh, j + 16)) * d + m;
    }
}

// block_q8_0: d (fp16), qs[32] as int8.
void q8_0(const uint8_t* b, float* y) {
    const float d = half_to_float(load_u16(b));
    for (size_t j = 0; j < kQK; ++j) y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

}  // namespace

bool can_dequantize(GgmlType type) {
    switch (type) {
        case GgmlType::F32:
        case GgmlType::F16:
        case GgmlType::BF16:
        case GgmlType::Q4_0:
        case GgmlType::Q4_1:
        case GgmlType::Q5_0:
        case GgmlType::Q5_1:
        case GgmlType::Q8_0:
            return true;
        default:
            return false;
    }
}

bool dequantize_elements(GgmlType type, std::span<const uint8_t> data, uint64_t first,
                         std::span<float> out) {
    if (!can_dequantize(type)) return false;
    const auto traits = ggml_type_traits(type);
    const uint64_t block = traits->block_size, size = traits->type_size;
    const uint8_t* base = data.data() + first / block * size;
    const size_t n = out.size();
    float* y = out.data();
    switch (type) {
        case GgmlType::F32:
            std::memcpy(y, base, n * 4);
            return true;
        case GgmlType::F16:
            for (size_t i = 0; i < n; ++i) y[i] = half_to_float(load_u16(base + 2 * i));
            return true;
        case GgmlType::BF16:
            for (size_t i = 0; i < n; ++i) y[i] = bf16_to_float(load_u16(base + 2 * i));
            return true;
        default:
            break;
    }
    void (*one_block)(const uint8_t*, float*) = nullptr;
    switch (type) {
        case GgmlType::Q4_0:
            one_block = q4_0;
            break;
        case GgmlType::Q4_1:
            one_block = q4_1;
            break;
        case GgmlType::Q5_0:
            one_block = q5_0;
            break;
        case GgmlType::Q5_1:
            one_block = q5_1;
            break;
        default:
            one_block = q8_0;
            break;
    }
    for (size_t b = 0; b < n / kQK; ++b) one_block(base + b * size, y + b * kQK);
    return true;
}

}  // namespace rebox
