// Input adapter for plain float checkpoints (a Hugging Face directory whose safetensors hold
// F32/F16/BF16 tensors and nothing says quantized: no mcq metadata, no MLX quantization config,
// no .scales/.biases). Every tensor becomes a float SourceTensor in its own dtype; a tensor of any
// other dtype (F8_E4M3, I64, BOOL, ...) is a Blocker naming it and its dtype. Malformed
// safetensors files throw rebox::Error (input class).
#pragma once

#include <filesystem>

#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox {

SourceModel read_float_model(const ModelDir& model_dir);

}  // namespace rebox
