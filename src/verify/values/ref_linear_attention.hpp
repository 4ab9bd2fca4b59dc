// verify's own statement of what llama.cpp's converter does to a linear-attention (gated
// delta-net) layer of Qwen3.5 / Qwen3-Next, written apart from src/arch/transforms.cpp: which
// source row or column a GGUF row or column of a V-head-reordered tensor holds
// (_LinearAttentionVReorderBase._reorder_v_heads, the grouped-by-key-head order made tiled), and
// ssm_a = -exp(A_log) in the dtype the converter computes it in. The writer builds its maps from
// the source side; these answer from the GGUF side, one index at a time.
#pragma once

#include <cstdint>
#include <span>

#include "verify/values/ref_expected.hpp"

namespace rebox::verify_ref {

// GGUF row `row` of a tensor whose rows from `first` on are v_heads heads of `unit` rows each:
// the source row it holds. GGUF head p is the (p / k_heads)-th value head of key head
// p % k_heads, which the source stores at (p % k_heads) * (v_heads / k_heads) + p / k_heads.
// Rows before `first` (in_proj_qkv's q and k, conv1d's q and k channels) stay.
uint64_t v_head_source_row(uint64_t row, uint64_t first, uint64_t k_heads, uint64_t v_heads,
                           uint64_t unit);

// GGUF column `column` of out_proj (columns: v_heads blocks of head_v_dim): its source column.
uint64_t v_head_source_column(uint64_t column, uint64_t k_heads, uint64_t v_heads,
                              uint64_t head_v_dim);

// values: A_log widened exactly to binary32; replaced by the GGUF's ssm_a. F16 stays F16 in the
// converter (e^x rounded to fp16, then negated); BF16 is widened to binary32 first; binary32
// values get the correctly rounded binary32 of -e^x.
void neg_exp_as_converter(SourceFloat dtype, std::span<float> values);

}  // namespace rebox::verify_ref
