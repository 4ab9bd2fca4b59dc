// verify on the lossy GGUF tensors (Q4_K, Q8_0, ...) whose sources are float tensors: reads each
// checked row of the source as F32 in the GGUF's order with verify's own reading of the
// checkpoint (float widening, per-expert stacking, the rope row permutation), one row at a time
// into a buffer of one row per thread, and runs the row-wise check of quant_check.hpp on it with
// the tensor's imatrix entry; then fills each tensor's record: re-quantized, never
// "bit-identical". The rows are spread over the threads in work units of about kRequantUnitValues
// values, so memory stays a row per thread whatever the tensor's size, sampled or --full.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "format/mapped_file.hpp"
#include "rebox/rebox.hpp"
#include "verify/values/value_checks.hpp"

namespace rebox::verify_ref {

inline constexpr uint64_t kRequantUnitValues = uint64_t{1} << 20;  // values per work unit

struct RequantTask {
    // Paired and shape-checked like a value job (source and experts plain float sources).
    const ValueJob* job = nullptr;
    uint64_t values_per_row = 0;        // the GGUF tensor's ne[0]
    std::span<const float> importance;  // its imatrix entry (ref_imatrix_entry); empty: none
    std::string imatrix_problem;        // the entry does not fit the tensor (a problem line)
    TensorCheck* check = nullptr;       // the record to fill
};

// Checks every task on `threads` threads (full: every block, else the deterministic sample) and
// releases the mapped pages each work unit read once it is done, as the value checks do.
void check_requantized_tensors(std::span<RequantTask> tasks, bool full, unsigned threads,
                               std::span<const MappedFile* const> mappings);

}  // namespace rebox::verify_ref
