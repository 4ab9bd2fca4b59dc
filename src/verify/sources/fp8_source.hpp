// verify's own reading of FP8 block-quantized checkpoints (config.json quantization_config
// quant_method "fp8", weight_block_size [br, bc]; docs/formats.md §6), independent of source/:
// P.weight F8_E4M3 [rows, cols] with P.weight_scale_inv F32/BF16/F16 [ceil(rows/br),
// ceil(cols/bc)]; the value of (r, c) is e4m3 * scale(r / br, c / bc), computed in fp64 (exact)
// and rounded once to binary32, and a product that is not a binary32 value is reported. Every
// other tensor is read as a float; P.activation_scale is left out (llama.cpp's converter drops it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "format/safetensors.hpp"
#include "verify/sources/prequant_expected.hpp"
#include "verify/values/ref_expected.hpp"

namespace rebox::verify_ref {

struct Fp8Source {
    uint64_t rows = 0, cols = 0;
    uint64_t block_rows = 0, block_cols = 0;
    uint64_t scale_cols = 0;          // ceil(cols / block_cols)
    std::span<const uint8_t> codes;   // rows * cols E4M3 bytes
    std::span<const uint8_t> scales;  // [ceil(rows/br), scale_cols] of scale_dtype
    SourceFloat scale_dtype = SourceFloat::F32;
    // The lossy path of convert --quantize (the GGUF's rebox.fp8.rounded_to): each binary32
    // product rounded to this type, as llama.cpp's converter writes the file llama-quantize
    // quantizes; no inexact product is reported then. nullopt: the exact products.
    std::optional<SourceFloat> rounded_to;
};

// A binary32 value rounded to the nearest binary16 / bfloat16 (ties to even; beyond binary16's
// range: infinity) and widened back: verify's own rounding, by search over the exact widenings.
float ref_round_to_half(float value);
float ref_round_to_bf16(float value);

// The E4M3 (OCP E4M3FN) value of a byte as fp64: NaN for 0x7F / 0xFF.
double ref_e4m3(uint8_t byte);

// Values first .. first+out.size()-1 (row-major [rows, cols]); the first whose fp64 product is not
// a binary32 value (written rounded, or as an infinity beyond the range) is reported in `inexact`.
void expected_from_fp8(const Fp8Source& source, uint64_t first, std::span<float> out,
                       PrequantInexact& inexact);

// How an FP8 checkpoint scales its weights: blocks of block_rows x block_cols values (block_cols
// 0: the whole row, compressed-tensors' channel strategy), each P.weight scaled by P + the suffix.
struct Fp8Layout {
    uint64_t block_rows = 0, block_cols = 0;
    std::string scale_suffix;  // "_scale_inv" (quant_method fp8) or "_scale" (the others)
    bool per_tensor = false;   // ModelOpt FP8: one scale ([] or [1]) for the whole weight
};

// config.json's FP8 layout: quant_method "fp8" with weight_block_size [br, bc], or
// compressed-tensors float-quantized 8-bit float weights with the channel or block strategy, or
// (hf_quant_config.json beside it) ModelOpt's quant_algo "FP8"; nullopt otherwise. A malformed
// block size is an input error (rebox::Error).
std::optional<Fp8Layout> fp8_layout(const std::filesystem::path& config);

}  // namespace rebox::verify_ref
