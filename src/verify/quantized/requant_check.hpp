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
#include <vector>

#include "format/mapped_file.hpp"
#include "rebox/rebox.hpp"
#include "verify/quantized/quant_check.hpp"
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

// The work units of a set of tasks (row ranges of about kRequantUnitValues values, never across an
// expert), for a scheduler that runs each once the GGUF bytes it reads are written (UnitScheduler's
// extra units): construct, run every unit once (any order, any threads, each unit on one thread),
// then finish() fills the records, merging each tensor's parts in row order.
class RequantChecker {
  public:
    struct Unit {
        size_t task = 0;
        uint64_t first_row = 0, end_row = 0;
    };
    struct ByteRange {
        size_t shard = 0;
        uint64_t begin = 0, end = 0;  // in the shard's file
    };
    // Marks each task's record re-quantized and records the problems of those it cannot check.
    RequantChecker(std::span<RequantTask> tasks, bool full,
                   std::span<const MappedFile* const> mappings);
    size_t unit_count() const { return units_.size(); }
    ByteRange unit_range(size_t unit) const;  // the GGUF bytes the unit compares
    void run_unit(size_t unit);               // then releases the pages it read
    void finish();

  private:
    std::span<RequantTask> tasks_;
    std::span<const MappedFile* const> mappings_;
    std::vector<QuantTensorShape> shapes_;
    std::vector<bool> checkable_;
    std::vector<Unit> units_;
    std::vector<QuantRowsCheck> parts_;
};

// Checks every task on `threads` threads (full: every block, else the deterministic sample) and
// releases the mapped pages each work unit read once it is done, as the value checks do.
void check_requantized_tensors(std::span<RequantTask> tasks, bool full, unsigned threads,
                               std::span<const MappedFile* const> mappings);

}  // namespace rebox::verify_ref
