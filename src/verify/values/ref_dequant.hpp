// verify's own ggml dequantizers, one per type it accepts (ggml-quants.c dequantize_row_*,
// docs/gguf.md §2.2-2.3): arithmetic in binary32 exactly as the reference (int code converted to
// float, one multiply, one add for Q4_1/Q5_1; -ffp-contract=off keeps them separate roundings).
// Plain functions on spans.
#pragma once

#include <cstdint>
#include <span>

namespace rebox::verify_ref {

// Each takes whole blocks and writes block_count * 32 floats (out.size() must match).
void dequantize_q4_0(std::span<const uint8_t> blocks, std::span<float> out);  // 18 B/block
void dequantize_q4_1(std::span<const uint8_t> blocks, std::span<float> out);  // 20 B/block
void dequantize_q5_0(std::span<const uint8_t> blocks, std::span<float> out);  // 22 B/block
void dequantize_q5_1(std::span<const uint8_t> blocks, std::span<float> out);  // 24 B/block
void dequantize_q8_0(std::span<const uint8_t> blocks, std::span<float> out);  // 34 B/block
// Element types: 2 (F16, BF16) or 4 (F32) bytes per value, little-endian.
void dequantize_f16(std::span<const uint8_t> bytes, std::span<float> out);
void dequantize_bf16(std::span<const uint8_t> bytes, std::span<float> out);
void dequantize_f32(std::span<const uint8_t> bytes, std::span<float> out);

struct DecodableType {
    uint32_t block_size;  // values per block
    uint32_t block_bytes;
};

// The layout of a type verify can decode (F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, BF16, MXFP4,
// NVFP4 (ref_fp4.hpp)), else false.
bool decodable_type(uint32_t ggml_type_id, DecodableType* layout);

// Values first .. first+out.size()-1 of a tensor with raw bytes `data`; first and out.size() must
// be multiples of the block size and the range must lie inside data (the caller checks).
void dequantize_range(uint32_t ggml_type_id, std::span<const uint8_t> data, uint64_t first,
                      std::span<float> out);

}  // namespace rebox::verify_ref
