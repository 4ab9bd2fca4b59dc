// Block kernels: Q4_1 / Q5_1 blocks built by moving codes and copying each group's fp16 scale and
// min, never recomputing them; and binary32 dequantization (code*scale+min) for --outtype f32 and
// the exact F16/F32 fallback.
#pragma once

#include <cstddef>
#include <cstdint>

#include "source/source_model.hpp"

namespace rebox {

inline constexpr size_t kQ4_1BlockBytes = 20;  // fp16 d, fp16 m, qs[16]
inline constexpr size_t kQ5_1BlockBytes = 24;  // fp16 d, fp16 m, qh[4], qs[16]
inline constexpr size_t kQBlockValues = 32;

// How a block's d is taken from its group's scale.
enum class ScaleRule {
    exact,  // the scale must be exactly fp16 (else rebox::Error, blocker class)
    // A finite scale that is not exactly fp16, in a group whose codes are all 0, becomes +-0 (the
    // scale's sign): every value of the group is 0*d+m either way, bit for bit.
    zero_when_codes_zero,
};

// The group's scale / min as fp16 bits (F16: copied; BF16/F32: converted, caller checked
// exactness).
uint16_t group_scale_half(const QuantView& q, uint64_t group_index,
                          ScaleRule rule = ScaleRule::exact);
uint16_t group_min_half(const QuantView& q, uint64_t group_index);
// True when every code of group group_index is 0.
bool group_codes_all_zero(const QuantView& q, uint64_t group_index);

// Blocks [first_block, first_block+n_blocks) of q (block b = codes [32b, 32b+32)), q.bits <= 4 and
// q.group % 32 == 0; out has n_blocks*20 bytes.
void encode_q4_1(const QuantView& q, uint64_t first_block, size_t n_blocks, uint8_t* out,
                 ScaleRule rule = ScaleRule::exact);
// Same for q.bits <= 5 into Q5_1 (out: n_blocks*24 bytes).
void encode_q5_1(const QuantView& q, uint64_t first_block, size_t n_blocks, uint8_t* out,
                 ScaleRule rule = ScaleRule::exact);

}  // namespace rebox
