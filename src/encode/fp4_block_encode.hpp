// FP4 block kernels: MLX mxfp4 / nvfp4 codes (element 2i in the low nibble of byte i) moved into
// ggml's MXFP4 / NVFP4 blocks (element j and j+16 of a 32-block, or j and j+8 of a 16-sub-block,
// share a byte) with each group's scale byte copied unchanged; and the source's own binary32
// values (E2M1 * scale) for --outtype f32 and the fit checks. Codes are never changed: the
// table of E2M1 values is the same on both sides.
#pragma once

#include <cstddef>
#include <cstdint>

#include "source/source_model.hpp"

namespace rebox {

inline constexpr size_t kMxfp4BlockBytes = 17;  // e, qs[16]
inline constexpr size_t kMxfp4BlockValues = 32;
inline constexpr size_t kNvfp4BlockBytes = 36;  // d[4], qs[32]
inline constexpr size_t kNvfp4BlockValues = 64;

// Blocks [first_block, first_block+n_blocks) of v: MXFP4 block b = values [32b, 32b+32) (v.group
// 32), NVFP4 block b = values [64b, 64b+64) (v.group 16, four sub-blocks). out: n_blocks * 17 / 36.
void encode_mxfp4(const Fp4View& v, uint64_t first_block, size_t n_blocks, uint8_t* out);
void encode_nvfp4(const Fp4View& v, uint64_t first_block, size_t n_blocks, uint8_t* out);

}  // namespace rebox
