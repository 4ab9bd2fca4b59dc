// The value comparison of every matched (GGUF tensor, source tensor) pair, split into work units
// and run on a std::thread pool; each unit streams 64K-value chunks (no whole-tensor buffers).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ref_compare.hpp"
#include "source_index.hpp"

namespace rebox::verify_ref {

struct ValueJob {
    uint32_t gguf_type = 0;               // decodable (checked by the caller)
    std::span<const uint8_t> gguf_data;   // exactly the tensor's bytes (checked by the caller)
    const SourceEntry* source = nullptr;  // usable (no problem), same element count
    uint64_t values = 0;
    CompareResult result;  // filled by run_value_jobs
};

inline constexpr size_t kChunkValues = 65536;               // values per streamed chunk
inline constexpr uint64_t kUnitValues = 64 * kChunkValues;  // values per work unit (thread task)

// Compares values [first, first+count) of one job; the range is a multiple of 32 values except at
// the tensor's end. Scratch buffers hold kChunkValues each.
void compare_range(const ValueJob& job, uint64_t first, uint64_t count, std::span<float> expected,
                   std::span<float> got, std::span<uint8_t> codes, CompareResult& result);

// Runs every job on `threads` workers (>= 1).
void run_value_jobs(std::vector<ValueJob>& jobs, unsigned threads);

}  // namespace rebox::verify_ref
