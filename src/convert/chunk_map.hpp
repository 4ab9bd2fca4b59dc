// The work items of a conversion: every planned tensor cut into ~4 MB slices of output, each slice
// whole blocks, whole rows for row-permuted tensors, and inside one expert for stacked experts (so
// a slice reads one source tensor and the converter streams one expert at a time).
#pragma once

#include <cstdint>
#include <vector>

#include "chunk_encoder.hpp"

namespace rebox::convert_detail {

inline constexpr uint64_t kChunkOutputBytes = 4ull << 20;  // ~4 MB of output per work item

// `output_bytes` is the output size one chunk aims at (tests pass small values).
std::vector<Chunk> split_into_chunks(const Plan& plan, uint64_t output_bytes = kChunkOutputBytes);

}  // namespace rebox::convert_detail
