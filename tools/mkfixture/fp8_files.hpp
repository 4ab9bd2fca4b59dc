// FP8 block-quantized fixtures (--format fp8) in the layout of DeepSeek-V3's and Qwen3's -FP8
// releases, packed from the format's own definition (DeepSeek-V3's README "FP8 Weights",
// transformers' finegrained_fp8), independent of rebox's reader: P.weight F8_E4M3 [out, in] (OCP
// E4M3FN bytes), P.weight_scale_inv [ceil(out/br), ceil(in/bc)] with value = e4m3 * scale per
// block (edge blocks partial), config.json quantization_config {activation_scheme "dynamic", fmt
// "e4m3", quant_method "fp8", weight_block_size [br, bc]}; or compressed-tensors' float-quantized
// layout (Fp8Options::layout). Embeddings, lm_head, norms and MoE routers stay BF16 (as in
// Qwen/Qwen3-*-FP8).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "model_plan.hpp"

namespace mkfixture {

struct Fp8Options {
    // The scales: bf16 (Qwen) | f16 | pow2 (F32 powers of two 2^-16..2^-20, as scale_fmt ue8m0) |
    // f32-short (F32 with at most 20 significant bits: every product exact in F32) | f32 (F32 with
    // 24 significant bits, as DeepSeek-V3: products binary32 cannot hold).
    std::string scales = "bf16";
    int64_t block_rows = 128, block_cols = 128;
    // fp8 (DeepSeek-V3 / Qwen: P.weight_scale_inv, quant_method fp8) | ct-channel / ct-block
    // (llm-compressor's compressed-tensors float-quantized FP8: P.weight_scale, one per output row
    // [out, 1] or per block [ceil(out/br), ceil(in/bc)], strategy channel / block) | modelopt
    // (ModelOpt's FP8 export: hf_quant_config.json quant_algo FP8, P.weight_scale F32 [] for the
    // whole weight, P.input_scale F32 []).
    std::string layout = "fp8";
    // "" | nan (q_proj's first code 0x7F) | scale-shape (q_proj's scale one block row too many) |
    // no-scale (q_proj without its weight_scale_inv).
    std::string defect;
};

void add_fp8_quantization(const std::filesystem::path& out_dir, const Fp8Options& options);

void write_fp8_model_files(const std::filesystem::path& out_dir, const ModelPlan& plan,
                           int shard_count, uint64_t seed, const Fp8Options& options);

}  // namespace mkfixture
