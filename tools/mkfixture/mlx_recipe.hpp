// MLX quantization recipes for the fixtures: which bits/group each quantized module gets, and
// which per-module overrides config.json "quantization" lists (module path -> {group_size, bits}).
#pragma once

#include <map>
#include <string>
#include <utility>

#include "model_plan.hpp"

namespace mkfixture {

inline constexpr int kMlxGlobalBits = 4;
inline constexpr int kMlxGlobalGroup = 64;

// "uniform4" | "mixed_3_4" | "mixed_4_5" | "mixed_4_6" | "dynamic_4_5" | "uniform4_float_down0".
const std::vector<std::string>& mlx_recipe_names();

// mlx-lm's mixed-recipe layer rule (mlx_lm/convert.py): use_more_bits for layer i of L.
bool mlx_use_more_bits(int64_t layer, int64_t layer_count);

// Sets bits/group of every quantized unit of `plan` for `recipe` and returns the overrides to
// write (module path, i.e. the tensor name without ".weight" -> {bits, group}; {0, 0}: false, the
// module is not quantized). Throws
// std::runtime_error for an unknown recipe.
std::map<std::string, std::pair<int, int>> apply_mlx_recipe(ModelPlan& plan,
                                                            const std::string& recipe);

}  // namespace mkfixture
