// verify's own FP4 arithmetic, written from the two specifications and independent of encode/:
// - the source side (OCP Microscaling / NVIDIA NVFP4, as MLX stores them): element 2i of a row in
//   the low nibble of byte i, value = E2M1(code) * scale, E2M1 decoded from its bits (sign,
//   2 exponent bits with bias 1, 1 mantissa bit), MXFP4 scale 2^(e-127), NVFP4 scale an E4M3
//   byte (4 exponent bits with bias 7, 3 mantissa bits);
// - the GGUF side (ggml-quants.c dequantize_row_mxfp4 / _nvfp4): ggml's doubled table
//   {0,1,2,3,4,6,8,12,...} times half the scale, element j and j+16 (MXFP4) or j and j+8 (each
//   NVFP4 16-value sub-block) sharing a byte, the UE4M3 sign bit ignored and 0x7F read as 0.
// ggml's table has no negative zero: the source's -0 (code 8) is expected back as +0 (the
// "identical" of docs/formats.md §2.1).
#pragma once

#include <cstdint>
#include <span>

namespace rebox::verify_ref {

struct Fp4Source {
    bool nvfp4 = false;  // false: MXFP4 (E8M0, group 32); true: NVFP4 (E4M3, 16)
    uint64_t group = 32;
    std::span<const uint8_t> codes;   // two codes per byte, element 2i in the low nibble
    std::span<const uint8_t> scales;  // one byte per group
};

// Values first .. first+out.size()-1 of the source; with `plus_zero` (the GGUF holds MXFP4/NVFP4
// blocks) code 8 (-0) is written as +0.
void expected_from_fp4(const Fp4Source& source, uint64_t first, std::span<float> out,
                       bool plus_zero);

// ggml_ue4m3_to_fp32: half an NVFP4 GGUF block's UE4M3 scale (the grid is doubled); 0 and 0x7F
// give 0, bit 7 is not read.
float ue4m3_half(uint8_t x);

// GGUF blocks to values: MXFP4 17 bytes / 32 values, NVFP4 36 bytes / 64 values.
void dequantize_mxfp4(std::span<const uint8_t> blocks, std::span<float> out);
void dequantize_nvfp4(std::span<const uint8_t> blocks, std::span<float> out);

}  // namespace rebox::verify_ref
