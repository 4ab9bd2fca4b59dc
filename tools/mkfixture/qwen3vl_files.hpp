// Qwen3-VL fixtures (--arch qwen3_vl): the text model is qwen3's (model_plan.cpp) under
// transformers' model.language_model.*, plus a whole tiny vision tower (float in every format, as
// the quantizers leave `visual` unquantized) with the names of Qwen/Qwen3-VL-2B-Instruct's
// model.safetensors.index.json (model.visual.*: the Conv3D patch embedding with its bias, the
// learned pos_embed, blocks with LayerNorms, fused attn.qkv, linear_fc1 / linear_fc2, the merger
// and the deepstack mergers), its config.json keys (text_config with an interleaved M-RoPE
// rope_scaling, vision_config with deepstack_visual_indexes) and preprocessor_config.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model_plan.hpp"

namespace mkfixture {

bool is_qwen3vl_arch(const std::string& arch);
std::string qwen3vl_text_prefix();
// The tower: patch embedding [32, 3, temporal, 16, 16] and bias, pos_embed [64, 32] (an 8 x 8
// grid), 4 blocks, the merger (norm [32], linear_fc1 [128, 128], linear_fc2 [merger_width, 128])
// and one deepstack merger per deepstack_visual_indexes entry (1 and 2: norm [128], linear_fc1,
// linear_fc2). merger_width: the mergers' output (text_hidden, or another width that must be
// refused); temporal: 2, or another size that must be refused.
void append_qwen3vl_tower(std::vector<PlanUnit>& units, int64_t merger_width, int64_t temporal);
// The same tower's tensors (name, row-major shape, value center and spread) with `deepstack`
// deepstack mergers (2 for Qwen3-VL, 0 for the Qwen3.5 tower, which has none).
struct Qwen3vlTowerTensor {
    std::string name;
    std::vector<int64_t> shape;
    double center = 0, spread = 0;
};
std::vector<Qwen3vlTowerTensor> qwen3vl_tower_tensors(int64_t merger_width, int64_t temporal,
                                                      int64_t deepstack);
// The Qwen3.5 tower's vision_config (Qwen3.5-0.8B's keys: deepstack_visual_indexes [], model_type
// qwen3_5) at the fixture's sizes, and Qwen3-VL's / Qwen3.5's preprocessor_config.json.
nlohmann::ordered_json qwen35_vision_config(int64_t merger_width);
void write_qwen3vl_preprocessor(const std::filesystem::path& out_dir, int64_t temporal);
void write_qwen3vl_config(const std::filesystem::path& out_dir, const Dims& d, bool tied,
                          int64_t bos_id, int64_t eos_id, int64_t temporal, int64_t merger_width);

}  // namespace mkfixture
