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

// rope_freqs.weight for rope_scaling type "llama3" (LlamaModel.generate_extra_tensors), head_dim/2
// values. The converter computes in torch float32 (rope_factors are float32 tensors, and
// `x / tensor` is reciprocal(tensor) * x); every step here is the same binary32 operation, the
// power rounded correctly from double. Defaults as the converter's: factor 8, low_freq_factor 1,
// high_freq_factor 4, original_max_position_embeddings 8192.
std::vector<float> llama3_rope_freqs(const ModelConfig& config);

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
