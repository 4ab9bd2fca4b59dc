// The sampling rule of verify's quantized-tensor check (block_sample.hpp): splitmix64 of
// seed + index decides the hash-chosen blocks, so the sample is the same on every run and
// machine, and a block's membership does not depend on which other blocks are sampled.
#include "verify/quantized/block_sample.hpp"

namespace rebox::verify_ref {

namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace

uint64_t sample_seed(std::string_view tensor_name) {
    uint64_t hash = 0xcbf29ce484222325ull;
    for (const char c : tensor_name) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 0x100000001b3ull;
    }
    return hash;
}

bool block_in_sample(uint64_t index, uint64_t block_count, uint64_t blocks_per_row, uint64_t seed) {
    if (index >= block_count) return false;
    if (block_count <= kAllBlocksUpTo) return true;
    if (index == 0 || index + 1 == block_count) return true;
    if (blocks_per_row > 0 && index == block_count - blocks_per_row) return true;  // last row
    if (blocks_per_row > 0 && index == blocks_per_row - 1) return true;  // end of the first row
    return splitmix64(seed + index) % kSampleOneIn == 0;
}

std::vector<uint64_t> sample_blocks(uint64_t block_count, uint64_t blocks_per_row, uint64_t seed,
                                    bool full) {
    std::vector<uint64_t> blocks;
    if (full) {
        blocks.reserve(block_count);
        for (uint64_t i = 0; i < block_count; ++i) blocks.push_back(i);
        return blocks;
    }
    blocks.reserve(block_count / kSampleOneIn + 8);
    for (uint64_t i = 0; i < block_count; ++i)
        if (block_in_sample(i, block_count, blocks_per_row, seed)) blocks.push_back(i);
    return blocks;
}

}  // namespace rebox::verify_ref
