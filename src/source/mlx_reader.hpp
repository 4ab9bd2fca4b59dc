// Input adapter for MLX (mlx-lm) affine-quantized checkpoints (docs/formats.md §1-2): a
// module P is quantized iff P.scales exists; then P.weight (U32 words holding one little-endian
// lsb0 code stream per row), P.scales and P.biases ([rows, cols/group], F16/BF16/F32) become one
// QuantView named P.weight with logical shape [rows, cols]. Bits and group come from config.json
// "quantization" (alias "quantization_config", also under "text_config") only: shapes are checked
// against them, never used to infer them. Every refusal is a Blocker naming the tensor.
#pragma once

#include <filesystem>

#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox {

// Throws rebox::Error (input class) when config.json or a safetensors file is unreadable/malformed.
SourceModel read_mlx_model(const ModelDir& model_dir);

}  // namespace rebox
