// Block kernels for integer-zero-point sources (GPTQ, AWQ, compressed-tensors): Q4_0 / Q5_0 /
// Q8_0 blocks hold the shifted codes q' = q - z + off (off 8 / 16 / 0) with d = the group's scale;
// Q4_1 / Q5_1 hold q with d = s, m = -z*s. ggml dequantizes (q' - off) * d (or q*d + m) in
// binary32, which equals float(q - z) * float(s) bit for bit (docs/formats.md §5.0). Also binary32
// dequantization for --outtype f32/f16/bf16 and the exact fallback.
#pragma once

#include <cstddef>
#include <cstdint>

#include "encode/block_encode.hpp"
#include "source/source_model.hpp"

namespace rebox {

inline constexpr size_t kQ4_0BlockBytes = 18;  // fp16 d, qs[16]
inline constexpr size_t kQ5_0BlockBytes = 22;  // fp16 d, qh[4], qs[16]
inline constexpr size_t kQ8_0BlockBytes = 34;  // fp16 d, int8 qs[32]

// Blocks [first_block, first_block+n_blocks) of v (block b: row b / (cols/32), columns 32*(b %
// (cols/32)) + 0..31; v.cols % 32 == 0 and each block inside one group, as the plan checked).
// The block's d is its group's scale as fp16 (F16 copied; BF16/F32 converted when exact; with
// ScaleRule::zero_when_codes_zero a scale that is not, in a block whose q - z are all 0, becomes
// +-0 with the scale's sign); otherwise rebox::Error (blocker class). Every q - z must lie in the
// type's range (Q4_0 [-8,7], Q5_0 [-16,15], Q8_0 [-128,127]; checked, rebox::Error otherwise).
void encode_q4_0_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out,
                     ScaleRule rule = ScaleRule::exact);
void encode_q5_0_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out,
                     ScaleRule rule = ScaleRule::exact);
void encode_q8_0_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out,
                     ScaleRule rule = ScaleRule::exact);
// Q4_1 (20 bytes): codes q in [0, 15] as nibbles, d = s, m = -z*s; both exact in fp16 (the plan
// checked; rebox::Error otherwise).
void encode_q4_1_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out);
// Q5_1 (24 bytes): codes q in [0, 31] (fifth bit in qh), d = s, m = -z*s, as Q4_1.
void encode_q5_1_int(const IntQuantView& v, uint64_t first_block, size_t n_blocks, uint8_t* out);

}  // namespace rebox
