// The source-format dispatcher: picks the input adapter for a checkpoint directory. GPTQ, AWQ or
// compressed-tensors when config.json quantization_config.quant_method says so; mcq-v1 when a
// safetensors file carries __metadata__["mcq"]; MLX when config.json has a quantization block with
// group_size/bits, or the tensors include *.scales beside *.biases; mcq-v1 again when stray
// quantized parts (.qcodes/.scales/.mins) are there without metadata (its reader names them);
// otherwise "float": nothing says quantized, every tensor is carried as a float.
#pragma once

#include <filesystem>
#include <string>

#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox {

// "gptq", "awq", "compressed-tensors", "mcq-v1", "mlx" or "float": the adapter read_source_model
// would use. Throws rebox::Error (input class) when the safetensors files or config.json cannot be
// read.
std::string detect_source_format(const ModelDir& model_dir);
std::string detect_source_format(const std::filesystem::path& model_dir);

// The adapter detect_source_format names reads the folder; the SourceModel keeps `model_dir`
// (config.json and the opened safetensors files) for the plan and verify to share.
SourceModel read_source_model(std::shared_ptr<const ModelDir> model_dir);
SourceModel read_source_model(const std::filesystem::path& model_dir);

}  // namespace rebox
