// Input adapter for FP8 block-quantized checkpoints (config.json quantization_config
// quant_method "fp8", fmt "e4m3", weight_block_size [rows, cols]: DeepSeek-V3/R1, Kimi-K2, Qwen3
// -FP8; docs/formats.md §6). Each P.weight (F8_E4M3 [out, in]) with its P.weight_scale_inv
// (F32, BF16 or F16, one per block) becomes one SourceTensor holding an Fp8View; every other
// tensor is an ordinary float SourceTensor. Shape, dtype and NaN problems are Blockers naming
// the file and tensor; a malformed quantization_config is an input error.
#pragma once

#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox {

SourceModel read_fp8_model(const ModelDir& model_dir);

}  // namespace rebox
