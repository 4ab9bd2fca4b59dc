// Which blocks of a quantized tensor verify re-quantizes (docs/design.md, "Verifying quantized
// tensors"). A deterministic sample: the first and last block of the tensor and of its first and
// last rows, and every block whose hash with the tensor's seed falls in 1/64 of the range, so
// about 1.6% of the blocks, spread over rows and columns without a stride that could line up with
// the row width. Tensors of at most kAllBlocksUpTo blocks are checked whole. `full` checks every
// block.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace rebox::verify_ref {

inline constexpr uint64_t kSampleOneIn = 64;    // hash-chosen density
inline constexpr uint64_t kAllBlocksUpTo = 64;  // small tensors: every block

// The tensor's sample seed: a 64-bit FNV-1a of its GGUF name, so each tensor samples other places.
uint64_t sample_seed(std::string_view tensor_name);

// True when block `index` of a tensor of `block_count` blocks in rows of `blocks_per_row` is in
// the sample (the rule above; blocks_per_row >= 1).
bool block_in_sample(uint64_t index, uint64_t block_count, uint64_t blocks_per_row, uint64_t seed);

// The sampled block indices in increasing order (all of them when full).
std::vector<uint64_t> sample_blocks(uint64_t block_count, uint64_t blocks_per_row, uint64_t seed,
                                    bool full);

}  // namespace rebox::verify_ref
