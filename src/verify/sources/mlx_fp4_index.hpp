// verify's own reading of an MLX mxfp4 / nvfp4 module (docs/formats.md §2.1), independent of
// source/: P.weight U32 [..., rows, cols/8] and P.scales U8 [..., rows, cols/group] (group 32
// E8M0 / 16 E4M3), no P.biases, bits 4; every scale byte finite and non-negative.
#pragma once

#include <string>

#include "format/safetensors.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

// True when `mode` is "mxfp4" or "nvfp4"; then entry is bound (fp4, shape, element_count) or
// entry.problem says what is wrong. `field` names the config entry (for messages).
bool bind_fp4_module(const std::string& mode, int64_t bits, int64_t group, const std::string& field,
                     const std::string& module, const SafetensorsFile& weight_file,
                     const StTensorInfo& weight, const SafetensorsFile& scales_file,
                     const StTensorInfo& scales, bool has_biases, SourceTensor& entry);

}  // namespace rebox::verify_ref
