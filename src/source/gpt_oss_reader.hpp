// read_gpt_oss_model: a gpt-oss checkpoint (config.json quantization_config.quant_method "mxfp4",
// docs/formats.md §4.1): the experts as OCP MXFP4 `*_blocks` U8 [E, rows, cols/32, 16] (element
// 2i in the low nibble of byte i of a row) with `*_scales` U8 E8M0 [E, rows, cols/32], every other
// tensor a float. The tensors are named as the gpt_oss registry table reads them
// (src/arch/gpt_oss.cpp): gate_up_proj becomes two views of the same interleaved tensor,
// mlp.experts.gate_proj and mlp.experts.up_proj (the plan keeps the even / odd rows), and
// self_attn.sinks gets ".weight". A scale byte 0xFF (NaN) or parts whose shapes disagree throw
// one input error naming the tensor.
#pragma once

#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox {

SourceModel read_gpt_oss_model(const ModelDir& model_dir);

}  // namespace rebox
