// Input adapter for FP8 block-quantized checkpoints (config.json quantization_config
// quant_method "fp8", fmt "e4m3", weight_block_size [rows, cols]: DeepSeek-V3/R1, Kimi-K2, Qwen3
// -FP8; docs/formats.md §6). Each P.weight (F8_E4M3 [out, in]) with its P.weight_scale_inv
// (F32, BF16 or F16, one per block) becomes one SourceTensor holding an Fp8View; every other
// tensor is an ordinary float SourceTensor. Shape, dtype and NaN problems are Blockers naming
// the file and tensor; a malformed quantization_config is an input error. llm-compressor's
// compressed-tensors FP8 (quant_method "compressed-tensors", format "float-quantized", weights
// type float of 8 bits, strategy "channel" or "block" with block_structure) is read the same way:
// P.weight_scale [out, 1] is a block of one row by the whole width, a block scale is as above.
#pragma once

#include <nlohmann/json.hpp>

#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox {

SourceModel read_fp8_model(const ModelDir& model_dir);

// Whether config.json's quantization_config is compressed-tensors' FP8 (format float-quantized,
// weights type float, num_bits 8): read by read_fp8_model.
bool is_ct_fp8(const nlohmann::json& config);

}  // namespace rebox
