// Input adapters for FP4 checkpoints from NVIDIA's toolchain (docs/formats.md §2.2): ModelOpt NVFP4
// (hf_quant_config.json quant_algo "NVFP4", or config.json quant_method "modelopt") and
// compressed-tensors nvfp4-pack-quantized / mxfp4-pack-quantized. Each quantized module P becomes
// one SourceTensor P.weight [out, in] holding an Fp4View; every other tensor is a float tensor.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox {

// ModelOpt's quant_algo (hf_quant_config.json, else config.json quantization_config with
// quant_method "modelopt"), or nullopt for a checkpoint ModelOpt did not write.
std::optional<std::string> modelopt_quant_algo(const ModelDir& dir);
// The FP4 kind of a compressed-tensors config (format nvfp4- / mxfp4-pack-quantized), or nullopt.
std::optional<Fp4Kind> ct_fp4_format(const nlohmann::json& config);

SourceModel read_modelopt_nvfp4_model(const ModelDir& model_dir);
SourceModel read_ct_fp4_model(const ModelDir& model_dir, Fp4Kind kind);

}  // namespace rebox
