// verify on a lossy GGUF tensor (Q4_K, Q8_0, ...) whose source is a float tensor: gathers the
// source values as F32 in the GGUF's order with verify's own reading of the checkpoint (float
// widening, per-expert stacking, the rope row permutation) and runs check_quantized_tensor on them
// (quant_check.hpp), then fills the tensor's record: re-quantized, never "bit-identical".
#pragma once

#include <cstdint>

#include "rebox/rebox.hpp"
#include "value_checks.hpp"

namespace rebox::verify_ref {

// job: paired and shape-checked like a value job (source and experts plain float sources).
// values_per_row: the GGUF tensor's ne[0]. full: every block, else the deterministic sample.
void check_requantized(const ValueJob& job, uint64_t values_per_row, bool full, TensorCheck& check);

}  // namespace rebox::verify_ref
