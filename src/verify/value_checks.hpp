// The value comparison of every matched (GGUF tensor, source tensor) pair, split into work units
// and run on a std::thread pool; each unit streams 64K-value chunks (no whole-tensor buffers) and
// drops the mapped pages it has read from the resident set.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "rebox/format/mapped_file.hpp"
#include "ref_compare.hpp"
#include "source_index.hpp"

namespace rebox::verify_ref {

struct ValueJob {
    uint32_t gguf_type = 0;               // decodable (checked by the caller)
    std::span<const uint8_t> gguf_data;   // exactly the tensor's bytes (checked by the caller)
    const SourceEntry* source = nullptr;  // usable (no problem), same element count
    uint64_t values = 0;
    // llama q/k: GGUF rows hold the source rows permuted per head (ref_rope.hpp); 0 = in order.
    uint64_t rope_head_rows = 0;
    uint64_t row_values = 0;  // values per row when rope_head_rows != 0
    // Stacked experts from per-expert sources: GGUF value i is value i % expert_values of
    // experts[i / expert_values] (source == experts[0]). Empty: the one source holds every value.
    std::vector<const SourceEntry*> experts;
    uint64_t expert_values = 0;
    // gemma norms: the GGUF holds the source value + 1 as the converter computes it
    // (ref_norm_shift.hpp). The source is a float tensor (the caller checked).
    bool norm_plus_one = false;
    CompareResult result;  // filled by run_value_jobs
};

inline constexpr size_t kChunkValues = 65536;               // values per streamed chunk
inline constexpr uint64_t kUnitValues = 64 * kChunkValues;  // values per work unit (thread task)

// Compares values [first, first+count) of one job; the range is a multiple of 32 values except at
// the tensor's end. Scratch buffers hold kChunkValues each.
void compare_range(const ValueJob& job, uint64_t first, uint64_t count, std::span<float> expected,
                   std::span<float> got, std::span<uint8_t> codes, CompareResult& result);

// The byte ranges values [first, first+count) of a job read: GGUF data, then the source's codes,
// scales and mins (quantized) or its float data; clipped to the arrays, unused parts empty.
std::vector<std::span<const uint8_t>> job_bytes(const ValueJob& job, uint64_t first,
                                                uint64_t count);

// Runs every job on `threads` workers (>= 1). Bytes a finished unit read are released from
// whichever of `mappings` holds them (whole pages; shared edge pages once the job is done).
void run_value_jobs(std::vector<ValueJob>& jobs, unsigned threads,
                    std::span<const MappedFile* const> mappings = {});

}  // namespace rebox::verify_ref
