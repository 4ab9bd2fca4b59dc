// mlx-vlm's layout of a Qwen2-VL / Qwen2.5-VL / Qwen3-VL checkpoint (--mlx-vlm with --format mlx):
// mlx_vlm.convert loads the published weights, runs the model's sanitize() and saves what it holds.
// Qwen2VL / Qwen2_5_VL Model.sanitize renames "visual" to "vision_tower", "model" to
// "language_model.model" and "lm_head" to "language_model.lm_head"; Qwen3-VL's renames
// "model.language_model" to "language_model.model", "model.visual" to "vision_tower" and
// "lm_head" to "language_model.lm_head"; the VisionModel.sanitize of all three stores the Conv3D
// patch embedding channel-last (PyTorch [out, in, T, kh, kw] transposed (0, 2, 3, 4, 1) to MLX's
// [out, T, kh, kw, in]). The tower stays float (mlx-vlm's quant predicate skips vision_tower).
#pragma once

#include <map>
#include <string>
#include <utility>

#include "model_plan.hpp"

namespace mkfixture {

// Renames every unit of `plan` (and the MLX per-module overrides) as mlx-vlm saves them and gives
// the patch embedding its channel-last shape (the fixture's values are drawn in that layout).
// quantized_tower: legacy mlx-vlm (<= v0.1.x, no --skip-vision), whose nn.quantize took every
// Linear of the tower too: each 2-D vision_tower.*.weight becomes affine 4-bit with groups of 32
// (the tower's 32-wide rows hold no group of 64), listed as a per-module override.
void apply_mlx_vlm_layout(ModelPlan& plan, std::map<std::string, std::pair<int, int>>& overrides,
                          bool quantized_tower = false);

}  // namespace mkfixture
