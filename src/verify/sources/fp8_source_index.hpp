// verify's source index of an FP8 checkpoint (fp8_source.hpp): each P.weight_scale_inv (or
// compressed-tensors' P.weight_scale) paired with its P.weight, dtypes, shapes and byte counts
// checked (a
// disagreement is a problem on the entry naming the tensor and what was expected; a scale without
// its weight a problem of the index).
#pragma once

#include "format/safetensors.hpp"
#include "verify/sources/fp8_source.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

// The model must stay alive while the index is used (spans point into its mappings).
SourceIndex index_fp8_source(const SafetensorsModel& model, const Fp8Layout& layout);

}  // namespace rebox::verify_ref
