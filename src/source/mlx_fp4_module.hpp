// One MLX module in mode "mxfp4" or "nvfp4" (docs/formats.md §2.1): P.weight U32 [..., rows,
// cols/8] (eight E2M1 codes per little-endian word, code k at bits 4k) and P.scales U8 [..., rows,
// cols/group] (E8M0 for mxfp4, group 32; E4M3 for nvfp4, group 16), no biases, no global scale.
// Checks the dtypes, the shapes against each other and every scale byte, then yields an Fp4View.
#pragma once

#include <optional>
#include <string>

#include "format/safetensors.hpp"
#include "source/source_model.hpp"

namespace rebox::mlx {

// The mode's kind, or nullopt for any other mode ("affine", "mxfp8", ...).
std::optional<Fp4Kind> fp4_kind(const std::string& mode);
// The only group size the mode allows (32 / 16).
int64_t fp4_group(Fp4Kind kind);

// Index of the first scale byte that is not a finite, non-negative scale of `kind` (MXFP4: 0xFF is
// NaN; NVFP4: 0x7F / 0xFF are NaN, bit 7 set is negative), or nullopt.
std::optional<uint64_t> first_bad_fp4_scale(const Fp4View& v);
// Why scale byte `byte` is refused ("E8M0 0xff is NaN", ...), or nullptr.
const char* fp4_scale_problem(Fp4Kind kind, uint8_t byte);

// Appends the module's tensor (named module + ".weight") to model.tensors, or one Blocker naming
// the tensor and what is wrong. `field` names the config entry the mode came from.
void read_fp4_module(const std::string& module, Fp4Kind kind, const std::string& field,
                     const SafetensorsFile& weight_file, const StTensorInfo& weight,
                     const SafetensorsFile& scales_file, const StTensorInfo& scales,
                     bool has_biases, SourceModel& model);

}  // namespace rebox::mlx
