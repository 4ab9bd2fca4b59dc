// FP4 fixtures in the layouts of NVIDIA's toolchain (--format modelopt-nvfp4 | ct-nvfp4 |
// ct-mxfp4), packed from the formats' own documentation, independent of rebox's readers:
// - ModelOpt (modelopt/torch/quantization/qtensor/nvfp4_tensor.py): P.weight U8 [out, in/2] with
//   (q[..., 1::2] << 4) | q[..., 0::2], P.weight_scale F8_E4M3 [out, in/16], P.weight_scale_2 F32
//   scalar (amax / (6 * 448)), P.input_scale F32 scalar; hf_quant_config.json quant_algo NVFP4.
// - compressed-tensors nvfp4-pack-quantized (compressors/nvfp4/helpers.py pack_fp4_to_uint8):
// P.weight_packed
//   U8 [out, in/2] (element 2i low), P.weight_scale F8_E4M3 [out, in/16], P.weight_global_scale
//   F32 [1] (448 * 6 / amax), P.input_global_scale F32 [1]; mxfp4-pack-quantized: P.weight_scale
//   U8 E8M0 [out, in/32], no global scale.
// Embeddings and MoE routers stay BF16 (the quantizers' defaults exclude them); every other linear
// weight, lm_head included, is FP4. Experts are per-expert modules (Hugging Face's layout).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "model_plan.hpp"

namespace mkfixture {

struct NvidiaFp4Options {
    std::string format;      // modelopt-nvfp4 | ct-nvfp4 | ct-mxfp4
    std::string bad_scale;   // "" | nan | negative: scale byte 0 of kMlxInexactTensor refused
    bool bad_shape = false;  // q_proj's weight_scale has one group column too few
    // Every mlp.* weight gets a per-tensor factor of exactly 1 (the graphs of qwen2, gemma, phi3
    // ignore FFN .scale tensors: such a checkpoint converts).
    bool ffn_scale_one = false;
    // Every weight whose name holds this (when not empty) gets a factor of exactly 1 too.
    std::string scale_one_part;
    // A module whose factor is 1 gets the block scales such a module would have (amax / 6 of
    // weights near 0.05 in E4M3 itself: exponent fields 0..3, 2^-9 .. 0.117) rather than the
    // 2 .. 448 that a factor near 2^-15 pairs with, so a graph runs on values of a model's size.
    bool small_scales_when_one = false;
};

// Adds the quantization block to config.json (compressed-tensors) or writes hf_quant_config.json
// (ModelOpt).
void add_nvidia_fp4_quantization(const std::filesystem::path& out_dir,
                                 const NvidiaFp4Options& options);

void write_nvidia_fp4_model_files(const std::filesystem::path& out_dir, const ModelPlan& plan,
                                  int shard_count, uint64_t seed, const NvidiaFp4Options& options);

}  // namespace mkfixture
