// The FP4 repack: a nibble reorder plus a scale byte copy (fp4_block_encode.hpp).
#include "encode/fp4_block_encode.hpp"

#include "source/source_values.hpp"  // Fp4View

namespace rebox {
namespace {

// fp4_code_at, inlined for the block loops: value k is the low nibble of byte k/2 when k is even.
inline uint8_t code_at(const uint8_t* codes, uint64_t k) {
    const uint8_t byte = codes[k / 2];
    return k % 2 == 0 ? byte & 0x0f : byte >> 4;
}

}  // namespace

void encode_mxfp4(const Fp4View& v, uint64_t first_block, size_t n_blocks, uint8_t* out) {
    const uint8_t* codes = v.codes.data();
    for (size_t b = 0; b < n_blocks; ++b, out += kMxfp4BlockBytes) {
        const uint64_t block = first_block + b;
        const uint64_t base = block * kMxfp4BlockValues;
        out[0] = v.scales[block];
        for (uint64_t j = 0; j < 16; ++j)
            out[1 + j] =
                static_cast<uint8_t>(code_at(codes, base + j) | code_at(codes, base + j + 16) << 4);
    }
}

void encode_nvfp4(const Fp4View& v, uint64_t first_block, size_t n_blocks, uint8_t* out) {
    const uint8_t* codes = v.codes.data();
    for (size_t b = 0; b < n_blocks; ++b, out += kNvfp4BlockBytes) {
        const uint64_t block = first_block + b;
        for (uint64_t s = 0; s < 4; ++s) {
            const uint64_t base = block * kNvfp4BlockValues + 16 * s;
            out[s] = v.scales[block * 4 + s];
            for (uint64_t j = 0; j < 8; ++j)
                out[4 + 8 * s + j] = static_cast<uint8_t>(code_at(codes, base + j) |
                                                          code_at(codes, base + j + 8) << 4);
        }
    }
}

}  // namespace rebox
