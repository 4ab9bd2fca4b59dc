// One MLX module in mode "mxfp4" or "nvfp4" (docs/formats.md §2.1): P.weight U32 [..., rows,
// cols/8] (eight E2M1 codes per little-endian word, code k at bits 4k) and P.scales U8 [..., rows,
// cols/group] (E8M0 for mxfp4, group 32; E4M3 for nvfp4, group 16), no biases, no global scale.
// Checks the dtypes, the shapes against each other and every scale byte, then yields an Fp4View.
#pragma once

#include <string>

#include "format/safetensors.hpp"
#include "source/source_model.hpp"

namespace rebox::mlx {

// The mode's kind, or nullopt for any other mode ("affine", "mxfp8", ...).
std::optional<Fp4Kind> fp4_kind(const std::string& mode);
// The only group size the mode allows (32 / 16).
int64_t fp4_group(Fp4Kind kind);

// Appends the module's tensor (named module + ".weight") to model.tensors, or one Blocker naming
// the tensor and what is wrong. `field` names the config entry the mode came from.
void read_fp4_module(const std::string& module, Fp4Kind kind, const std::string& field,
                     const SafetensorsFile& weight_file, const StTensorInfo& weight,
                     const SafetensorsFile& scales_file, const StTensorInfo& scales,
                     bool has_biases, SourceModel& model);

}  // namespace rebox::mlx
