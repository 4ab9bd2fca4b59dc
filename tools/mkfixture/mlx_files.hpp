// MLX-layout fixture output (--format mlx): config.json with "quantization" (and the duplicate
// "quantization_config" mlx-lm writes), and safetensors files holding per quantized module P
// P.weight (U32 [rows, cols*bits/32]), P.scales and P.biases ([rows, cols/group], --scale-dtype),
// with BF16 norms.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "model_plan.hpp"

namespace mkfixture {

struct MlxOptions {
    std::string scale_dtype = "bf16";      // bf16 | f16 | f32
    std::string negative_scales = "half";  // half | none | all
    bool inexact_scales = false;           // one group's scale is not fp16-exact (bf16 / f32 only)
    std::map<std::string, std::pair<int, int>> overrides;  // module path -> {bits, group}
    // --format mxfp4 | nvfp4: mlx-lm's FP4 modes (every module 4-bit, group 32 / 16, U8 scales,
    // no biases); "" for affine.
    std::string fp4_mode;
    std::string fp4_bad_scale;  // "" | nan | negative: one bad scale byte in kMlxInexactTensor
};

// The group size mlx-lm forces for an FP4 mode.
inline int fp4_mode_group(const std::string& mode) { return mode == "nvfp4" ? 16 : 32; }

// The tensor whose group 0 gets the inexact scale with --inexact-scales.
inline const char* kMlxInexactTensor = "model.layers.0.self_attn.q_proj.weight";

// Adds the quantization block to the config.json already written in out_dir.
void add_mlx_quantization(const std::filesystem::path& out_dir, const MlxOptions& options);

void write_mlx_model_files(const std::filesystem::path& out_dir, const ModelPlan& plan,
                           int shard_count, uint64_t seed, const MlxOptions& options);

}  // namespace mkfixture
