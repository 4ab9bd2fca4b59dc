// verify's index of a GPTQ / AWQ (gemm, gemv) / compressed-tensors source: each quantized module
// becomes one entry named P.weight (the HF name the GGUF tensor maps back to) whose parts (qweight
// / qzeros / scales / g_idx, or weight_packed / weight_scale / weight_zero_point / weight_shape /
// weight_g_idx, or an int8 weight with weight_scale) are checked against each other and against
// config.json (dtype, shape, g_idx range) before any value is computed; every other tensor is a
// plain float entry.
#pragma once

#include "format/safetensors.hpp"
#include "verify/sources/prequant_config.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

// True when config.json names GPTQ, AWQ or compressed-tensors and no file carries mcq metadata.
bool is_prequant_source(const SafetensorsModel& model, const PrequantConfig& config);

// The model must stay alive while the index is used (spans point into its mappings).
SourceIndex index_prequant_source(const SafetensorsModel& model, const PrequantConfig& config);

}  // namespace rebox::verify_ref
