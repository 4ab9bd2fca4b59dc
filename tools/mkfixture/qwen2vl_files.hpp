// Qwen2-VL / Qwen2.5-VL fixtures (--arch qwen2_vl / qwen2_5_vl): the text model is qwen2's
// (model_plan.cpp) under the checkpoint's own prefix, plus a whole tiny vision tower and merger
// (float in every format, as the quantizers leave `visual` unquantized) with the names of
// Qwen/Qwen2-VL-2B-Instruct's and Qwen/Qwen2.5-VL-3B-Instruct's model.safetensors.index.json, the
// config.json of each (vision_config, rope_scaling with mrope_section) and
// preprocessor_config.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model_plan.hpp"

namespace mkfixture {

bool is_qwen2vl_arch(const std::string& arch);
// The text model's prefix: "model." (as published), or transformers >= 4.52's
// "model.language_model." (split_layout), whose tower is then "model.visual.".
std::string qwen2vl_text_prefix(bool split_layout);
// The tower: a Conv3D patch embedding [32, 3, 2, 14, 14], 4 blocks (fused qkv with bias, proj,
// Qwen2-VL's LayerNorms and fc1/fc2 MLP or Qwen2.5-VL's RMSNorms and gate/up/down MLP), the merger
// (ln_q, mlp.0 [128, 128], mlp.2 [text_hidden, 128]).
// temporal: the patch embedding's temporal size (2; 3 for a checkpoint that must be refused);
// merger_width: mlp.2's output (text_hidden, or another width that must be refused).
void append_qwen2vl_tower(std::vector<PlanUnit>& units, const std::string& arch,
                          int64_t merger_width, bool split_layout, int64_t temporal = 2);
// config.json (Qwen2-VL-2B-Instruct's / Qwen2.5-VL-3B-Instruct's keys: flat text numbers, or
// text_config for the split layout) and preprocessor_config.json; temporal: the vision_config's
// temporal_patch_size; merger_width: the vision_config's merger output (hidden_size /
// out_hidden_size).
void write_qwen2vl_config(const std::filesystem::path& out_dir, const Dims& d, bool tied,
                          int64_t bos_id, int64_t eos_id, const std::string& arch,
                          bool split_layout, int64_t temporal, int64_t merger_width);

}  // namespace mkfixture
