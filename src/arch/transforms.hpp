// The exact transforms the registry's architectures name: whole-row permutations (the encoding of
// each row is left to convert/, so one row map serves every encoding) and tensors computed from
// config.json in binary32 exactly as llama.cpp's converter computes them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/model_config.hpp"

namespace rebox::arch {

// LlamaModel.permute as a row map: the source tensor's rows seen as [heads, 2, D/2] are
// re-read as [heads, D/2, 2] (D = rows / heads). Element r is the source row GGUF row r holds.
// nullopt when heads does not divide rows or D is odd.
std::optional<std::vector<uint32_t>> rope_pair_source_rows(uint64_t rows, uint32_t heads);

// The V-head reorder of linear-attention layers (Qwen3.5 / Qwen3-Next,
// _LinearAttentionVReorderBase._reorder_v_heads): HF stores the v_heads value heads grouped by key
// head, [k0: v0..v(r-1), k1: v0..v(r-1), ...] (r = v_heads / k_heads); the GGUF holds them tiled,
// [v0 of k0, v0 of k1, ..., v1 of k0, ...], so ggml can broadcast the key heads. As a row map:
// rows [first, first + v_heads * unit) are v_heads heads of `unit` rows each and GGUF head
// j * k_heads + k holds source head k * r + j; rows before `first` stay. Element r is the source
// row GGUF row r holds. nullopt when rows != first + v_heads * unit, k_heads does not divide
// v_heads or a count is 0. Used with unit head_v_dim on in_proj_qkv (first 2 * k_heads *
// head_k_dim: q and k stay) and conv1d's channels, with unit head_v_dim on in_proj_z, with unit
// 1 on in_proj_a / in_proj_b and the one-value rows of A_log and dt_bias.
std::optional<std::vector<uint32_t>> v_head_source_rows(uint64_t rows, uint64_t first,
                                                        uint32_t k_heads, uint32_t v_heads,
                                                        uint64_t unit);

// The same reorder on the columns of out_proj ([rows, v_heads * head_v_dim]): each row is cut
// into v_heads blocks of head_v_dim values, and block p of GGUF row i holds block (the source
// head of p) of source row i. As a map over blocks (rows * v_heads of them, in row order),
// element b is the source block GGUF block b holds, so whole head_v_dim-value units move.
std::optional<std::vector<uint32_t>> v_head_source_column_blocks(uint64_t rows, uint32_t k_heads,
                                                                 uint32_t v_heads);

// Qwen3-Next's in_proj_qkvz split (Qwen3NextModel.modify_tensors): the source's rows are k_heads
// groups of [q: key_rows, k: key_rows, v: value_rows, z: value_rows] (key_rows = the key head dim,
// value_rows = value heads / key heads * the value head dim). `z` false gives attn_qkv's rows:
// every group's q rows, then every group's k rows, then every group's v rows; `z` true gives
// attn_gate's: every group's z rows. Element r is the source row GGUF row r holds. nullopt when a
// count is 0 or the rows do not fit uint32.
std::optional<std::vector<uint32_t>> qkvz_source_rows(uint32_t k_heads, uint64_t key_rows,
                                                      uint64_t value_rows, bool z);

// ssm_a = -exp(A_log) (Qwen3NextModel.modify_tensors). prepare_tensors widens BF16 to float32
// first and keeps F16 as F16. A binary32 A_log: the correctly rounded binary32 of -e^x (computed
// in double). torch's CPU exp (SLEEF, 1-ulp bound) and numpy's are not correctly rounded and do
// not agree with each other, so a converter's file may differ from this in the last bit of some
// values (docs/architectures.md "qwen35").
float neg_exp_f32(float widened_value);
// An F16 A_log: exp rounded to the nearest fp16, negated, widened exactly to F32.
float neg_exp_f16(uint16_t half_bits);

// rope_freqs.weight for rope_scaling type "llama3" (LlamaModel.generate_extra_tensors), head_dim/2
// values. The converter computes in torch float32 (rope_factors are float32 tensors, and
// `x / tensor` is reciprocal(tensor) * x); every step here is the same binary32 operation, the
// power rounded correctly from double. Defaults as the converter's: factor 8, low_freq_factor 1,
// high_freq_factor 4, original_max_position_embeddings 8192.
std::vector<float> llama3_rope_freqs(const ModelConfig& config);

// rope_freqs.weight of gemma4's "proportional" rope (Gemma4Model.generate_extra_tensors): for the
// full layers' head_dim D and rope_parameters.full_attention.partial_rotary_factor p,
// int(D * p / 2) values 1.0, then 1e30 (as binary32) up to int(D / 2): the pairs past the rotated
// ones get a frequency too small to turn them.
std::vector<float> proportional_rope_freqs(const ModelConfig& config);

// rope_factors_long.weight (long = true) or rope_factors_short.weight of a "longrope"/"su"
// rope_scaling (Phi3MiniModel.generate_extra_tensors): torch.tensor(factors, dtype=float32), each
// JSON number rounded once to binary32. Empty when config.json has no such list.
std::vector<float> phi3_rope_factors(const ModelConfig& config, bool long_factors);

// gemma's norm shift (ValueTransform::add_one) as llama.cpp's converter computes it. Its
// prepare_tensors turns every dtype except F16 and F32 into float32 before modify_tensors adds 1:
// a BF16 or F32 weight gets a binary32 add (one rounding, in binary32, never in bf16) ...
float norm_plus_one_f32(float widened_value);
// ... while an F16 weight stays F16, so the add rounds to the nearest fp16 (ties to even); the
// result is then widened exactly to F32 for the GGUF.
float norm_plus_one_f16(uint16_t half_bits);

}  // namespace rebox::arch
