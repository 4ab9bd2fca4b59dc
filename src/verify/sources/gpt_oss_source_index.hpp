// verify's own reading of a gpt-oss checkpoint (config.json quantization_config.quant_method
// "mxfp4"), independent of source/: the experts' OCP MXFP4 `P_blocks` U8 [E, rows, cols/32, 16]
// (element 2i in the low nibble of byte i of a row) with `P_scales` U8 E8M0 [E, rows, cols/32],
// every other tensor a float. Entries are named by what llama.cpp's GptOssModel writes them as:
// gate_up_proj gives "mlp.experts.gate_proj.weight" (even rows) and "mlp.experts.up_proj.weight"
// (odd rows), down_proj "mlp.experts.down_proj.weight", their biases ".bias", the sinks
// "self_attn.sinks.weight".
#pragma once

#include <filesystem>

#include "format/safetensors.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

// True when config.json's quantization_config says quant_method "mxfp4".
bool is_gpt_oss_source(const std::filesystem::path& config_path);

// The model must stay alive while the index is used (spans point into its mappings).
SourceIndex index_gpt_oss_source(const SafetensorsModel& model);

}  // namespace rebox::verify_ref
