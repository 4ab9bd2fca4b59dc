// Input adapters for integer-zero-point checkpoints (docs/formats.md §5), chosen by config.json
// quantization_config.quant_method: "gptq" (AutoGPTQ / GPTQModel), "awq" (AutoAWQ, version gemm)
// and "compressed-tensors" (pack-quantized, int-quantized). Each quantized module P becomes one
// SourceTensor P.weight [out, in] holding an IntQuantView over the packed parts as stored; every
// other tensor is an ordinary float SourceTensor. Config and shape problems are Blockers naming the
// tensor or field (the module is left out).
#pragma once

#include <filesystem>

#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox {

// Throw rebox::Error (input class) when config.json is malformed.
SourceModel read_gptq_model(const ModelDir& model_dir);
SourceModel read_awq_model(const ModelDir& model_dir);
SourceModel read_compressed_tensors_model(const ModelDir& model_dir);

}  // namespace rebox
