// verify's own reading of ModelOpt NVFP4 and compressed-tensors nvfp4- / mxfp4-pack-quantized
// checkpoints (docs/formats.md §2.2), independent of source/: P.weight (ModelOpt) or
// P.weight_packed (compressed-tensors) U8 [out, in/2], element 2i in the low nibble; P.weight_scale
// F8_E4M3 [out, in/16] (NVFP4) or U8 E8M0 [out, in/32] (MXFP4); the per-tensor factor ModelOpt
// P.weight_scale_2 (F32, verbatim) or compressed-tensors P.weight_global_scale g (the GGUF holds
// fl32(1/g)). Every scale byte must be finite and non-negative.
#pragma once

#include <filesystem>
#include <optional>

#include "format/safetensors.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

enum class NvidiaFp4Layout { modelopt_nvfp4, ct_nvfp4, ct_mxfp4 };

// The layout of the checkpoint in model_dir (hf_quant_config.json or config.json), or nullopt.
std::optional<NvidiaFp4Layout> nvidia_fp4_layout(const std::filesystem::path& model_dir);

SourceIndex index_nvidia_fp4_source(const SafetensorsModel& model, NvidiaFp4Layout layout);

// Whether llama.cpp's graph of `gguf_arch` multiplies the .scale of GGUF weight `gguf_weight` in
// (verify's own table of src/models/*.cpp: build_qkv / wo_s everywhere; dense FFN on llama and
// qwen3; experts on llama and qwen3moe; output except bert).
bool ref_graph_applies_scale(std::string_view gguf_arch, const std::string& gguf_weight);

}  // namespace rebox::verify_ref
