// verify's own reading of an MLX (mlx-lm affine) source, independent of source/ and plan/: its own
// parse of config.json "quantization" (alias "quantization_config", also under "text_config";
// global group_size/bits/mode, per-module overrides or false) and its own checks of every
// P.weight (U32 [rows, cols*bits/32]) / P.scales / P.biases ([rows, cols/group], one float
// dtype). Rows are whole little-endian words and cols*bits is a multiple of 32, so a weight's bytes
// are one flat lsb0 stream and the mcq extraction (ref_lsb0) applies unchanged.
#pragma once

#include <filesystem>

#include "format/safetensors.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

// True when no file carries mcq metadata and config.json has a quantization block with
// group_size or bits. Throws rebox::Error (input) when config.json exists but is not JSON.
bool is_mlx_source(const SafetensorsModel& model, const std::filesystem::path& config_path);

// The index of an MLX source: quantized modules by P.weight with shape [rows, cols], plain
// tensors as they are. The model must stay alive while the index is used.
SourceIndex index_mlx_source(const SafetensorsModel& model,
                             const std::filesystem::path& config_path);

}  // namespace rebox::verify_ref
