// The ggml reference dequantizers rewritten for verify (ggml-quants.c, docs/gguf.md §2.3). Block
// layouts (ggml-common.h): Q4_0 d|qs[16]; Q4_1 d|m|qs[16]; Q5_0 d|qh[4]|qs[16]; Q5_1
// d|m|qh[4]|qs[16]; Q8_0 d|qs[32] (int8). Nibbles: qs[j]&15 is value j, qs[j]>>4 is value j+16; qh
// bit j is value j's fifth bit.
#include "verify/values/ref_dequant.hpp"

#include "verify/values/ref_fp4.hpp"
#include "verify/values/ref_half.hpp"
#include "verify/values/ref_kernels.hpp"

namespace rebox::verify_ref {
namespace {

constexpr size_t kBlockValues = 32;
constexpr uint32_t kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8,
                   kMXFP4 = 39, kNVFP4 = 40,
                   kBF16 = 30;  // ggml type ids (ggml.h)

// y[j] = float(code[j]) * d + m for one block: unpacked codes in a local array first, so this loop
// has no aliasing with the block bytes and the compiler vectorises it (separate multiply and add,
// -ffp-contract=off).
inline void scale_and_offset(const uint8_t (&codes)[kBlockValues], float d, float m,
                             float* __restrict y) {
    for (size_t j = 0; j < kBlockValues; ++j) y[j] = static_cast<float>(codes[j]) * d + m;
}

}  // namespace

void dequantize_q4_0(std::span<const uint8_t> blocks, std::span<float> out) {
    const size_t block_count = out.size() / kBlockValues;
    for (size_t b = 0; b < block_count; ++b) {
        const uint8_t* block = blocks.data() + b * 18;
        const float d = half_bits_to_float(load_u16le(block));
        const uint8_t* qs = block + 2;
        float* y = out.data() + b * kBlockValues;
        for (size_t j = 0; j < 16; ++j) {
            const int x0 = (qs[j] & 0x0F) - 8;
            const int x1 = (qs[j] >> 4) - 8;
            y[j] = static_cast<float>(x0) * d;
            y[j + 16] = static_cast<float>(x1) * d;
        }
    }
}

void dequantize_q4_1(std::span<const uint8_t> blocks, std::span<float> out) {
    kernels().dequantize_q4_1(blocks.data(), out.size() / kBlockValues, out.data());
}

void dequantize_q5_0(std::span<const uint8_t> blocks, std::span<float> out) {
    const size_t block_count = out.size() / kBlockValues;
    for (size_t b = 0; b < block_count; ++b) {
        const uint8_t* block = blocks.data() + b * 22;
        const float d = half_bits_to_float(load_u16le(block));
        const uint32_t qh = load_u32le(block + 2);
        const uint8_t* qs = block + 6;
        float* y = out.data() + b * kBlockValues;
        for (size_t j = 0; j < 16; ++j) {
            const int high0 = static_cast<int>((qh >> j) & 1u) << 4;
            const int high1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
            const int x0 = ((qs[j] & 0x0F) | high0) - 16;
            const int x1 = ((qs[j] >> 4) | high1) - 16;
            y[j] = static_cast<float>(x0) * d;
            y[j + 16] = static_cast<float>(x1) * d;
        }
    }
}

void dequantize_q5_1(std::span<const uint8_t> blocks, std::span<float> out) {
    const size_t block_count = out.size() / kBlockValues;
    for (size_t b = 0; b < block_count; ++b) {
        const uint8_t* block = blocks.data() + b * 24;
        const float d = half_bits_to_float(load_u16le(block));
        const float m = half_bits_to_float(load_u16le(block + 2));
        const uint32_t qh = load_u32le(block + 4);
        uint8_t codes[kBlockValues];
        for (size_t j = 0; j < 16; ++j) {
            const uint8_t high0 = static_cast<uint8_t>(((qh >> j) & 1u) << 4);
            const uint8_t high1 = static_cast<uint8_t>(((qh >> (j + 16)) & 1u) << 4);
            codes[j] = (block[8 + j] & 0x0F) | high0;
            codes[j + 16] = (block[8 + j] >> 4) | high1;
        }
        scale_and_offset(codes, d, m, out.data() + b * kBlockValues);
    }
}

void dequantize_q8_0(std::span<const uint8_t> blocks, std::span<float> out) {
    const size_t block_count = out.size() / kBlockValues;
    for (size_t b = 0; b < block_count; ++b) {
        const uint8_t* block = blocks.data() + b * 34;
        const float d = half_bits_to_float(load_u16le(block));
        const uint8_t* qs = block + 2;
        float* y = out.data() + b * kBlockValues;
        for (size_t j = 0; j < kBlockValues; ++j) {
            const int x = static_cast<int8_t>(qs[j]);
            y[j] = static_cast<float>(x) * d;
        }
    }
}

void dequantize_f16(std::span<const uint8_t> bytes, std::span<float> out) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = half_bits_to_float(load_u16le(&bytes[2 * i]));
}

void dequantize_bf16(std::span<const uint8_t> bytes, std::span<float> out) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_bits_to_float(load_u16le(&bytes[2 * i]));
}

void dequantize_f32(std::span<const uint8_t> bytes, std::span<float> out) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = float_from_bits(load_u32le(&bytes[4 * i]));
}

bool decodable_type(uint32_t ggml_type_id, DecodableType* layout) {
    DecodableType found{};
    switch (ggml_type_id) {
        case kF32:
            found = {1, 4};
            break;
        case kF16:
            found = {1, 2};
            break;
        case kBF16:
            found = {1, 2};
            break;
        case kQ4_0:
            found = {32, 18};
            break;
        case kQ4_1:
            found = {32, 20};
            break;
        case kQ5_0:
            found = {32, 22};
            break;
        case kQ5_1:
            found = {32, 24};
            break;
        case kQ8_0:
            found = {32, 34};
            break;
        case kMXFP4:
            found = {32, 17};
            break;
        case kNVFP4:
            found = {64, 36};
            break;
        default:
            return false;
    }
    if (layout) *layout = found;
    return true;
}

void dequantize_range(uint32_t ggml_type_id, std::span<const uint8_t> data, uint64_t first,
                      std::span<float> out) {
    DecodableType layout{};
    if (!decodable_type(ggml_type_id, &layout)) return;
    const uint64_t byte_begin = first / layout.block_size * layout.block_bytes;
    const uint64_t byte_count = out.size() / layout.block_size * layout.block_bytes;
    const std::span<const uint8_t> bytes = data.subspan(byte_begin, byte_count);
    switch (ggml_type_id) {
        case kF32:
            dequantize_f32(bytes, out);
            break;
        case kF16:
            dequantize_f16(bytes, out);
            break;
        case kBF16:
            dequantize_bf16(bytes, out);
            break;
        case kQ4_0:
            dequantize_q4_0(bytes, out);
            break;
        case kQ4_1:
            dequantize_q4_1(bytes, out);
            break;
        case kQ5_0:
            dequantize_q5_0(bytes, out);
            break;
        case kQ5_1:
            dequantize_q5_1(bytes, out);
            break;
        case kQ8_0:
            dequantize_q8_0(bytes, out);
            break;
        case kMXFP4:
            dequantize_mxfp4(bytes, out);
            break;
        case kNVFP4:
            dequantize_nvfp4(bytes, out);
            break;
        default:
            break;
    }
}

}  // namespace rebox::verify_ref
