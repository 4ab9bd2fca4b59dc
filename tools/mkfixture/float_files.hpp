// Plain float fixture output (--format float): a Hugging Face checkpoint with no quantization at
// all, every weight (projections, embedding, norms, biases) one float tensor of --dtype
// (bf16 | f16 | f32), config.json torch_dtype set to match. Float-only defects put one value fp16
// cannot hold, or one tensor of a dtype GGUF has no float type for, into a known tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model_plan.hpp"

namespace mkfixture {

struct FloatOptions {
    std::string dtype = "bf16";  // bf16 | f16 | f32
    std::string defect;          // "" or one of float_defect_names()
};

// "not-f16": value 0 of kFloatDefectTensor is 99840 (exact in bf16 and f32, above fp16's
// largest finite 65504); "f8-tensor": kFloatDefectTensor is stored as F8_E4M3.
const std::vector<std::string>& float_defect_names();
inline const char* kFloatDefectTensor = "model.layers.0.self_attn.q_proj.weight";

// Sets torch_dtype in the config.json already written in out_dir.
void set_float_torch_dtype(const std::filesystem::path& out_dir, const std::string& dtype);

// Throws std::runtime_error for a defect the dtype cannot carry (not-f16 with --dtype f16).
void write_float_model_files(const std::filesystem::path& out_dir, const ModelPlan& plan,
                             int shard_count, uint64_t seed, const FloatOptions& options);

}  // namespace mkfixture
