// A tiny Gemma 4 dense checkpoint (--arch gemma4), laid out as google/gemma-4-31B-it's is stored
// (Gemma4ForConditionalGeneration: the text model under "model.language_model.", a vision tower
// beside it, tied embeddings; BF16): 4 layers, three sliding-window layers (4 heads of 16, 2 kv
// heads) then a full-attention one (4 heads of global_head_dim 32, 1 kv head, no v_proj: the
// attention_k_eq_v layout), a [1] layer_scalar per layer, proportional rope parameters; a small
// Gemma-4-shaped tokenizer (gemma4_tokenizer.hpp). --format mcq writes the same tensors in mcq-v1
// (the embedding and layer 0 4-bit / 64, later layers 3-bit / 32, norms and layer_scalar F32);
// --format mlx as mlx-lm saves a conversion with --recipe (names under "language_model.model.",
// every matrix quantized, the vision tower dropped, norms and layer_scalar BF16); --format gptq /
// awq as GPTQModel saves it (each decoder layer's projections 4-bit in groups of 32, GPTQ
// symmetric, AWQ asymmetric; the embeddings, per_layer_model_projection, the vision tower,
// norms and layer_scalar F16; the KV-shared layers without k / v / k_norm); --format
// compressed-tensors as llm-compressor's W4A16 saves it (pack-quantized, each decoder layer's
// projections 4-bit / 32 symmetric with BF16 scales, the rest BF16); --format modelopt-nvfp4 as
// nvidia/Gemma-4-31B-IT-NVFP4 holds it (the MLP's projections NVFP4, attention BF16) and
// ct-nvfp4 as compressed-tensors nvfp4-pack-quantized uploads hold it (attention and MLP
// NVFP4); the embeddings and the vision tower BF16 in each (gemma4_files.cpp). Every format but mlx
// holds a tiny vision tower and projector with transformers' names (model.vision_tower.*,
// model.embed_vision.*; float: BF16 like the rest, mcq: F32, gptq / awq: F16) and google's
// processor_config.json; the E2B layout's tower has clipped linears, the others standardize. `moe`
// (float, or mcq with the 3-D fused experts F32: mcq-v1 holds 2-D weights only): the 26B-A4B
// layout, every layer with the MoE block beside its MLP: 2 experts of 32, both used (router.proj,
// router.scale, router.per_expert_scale, the fused experts.gate_up_proj and experts.down_proj,
// three more norms); --format mlx as mlx-lm saves the MoE model: experts of 64, split into
// experts.switch_glu.gate_proj / up_proj / down_proj (4-bit, group 64), the router's proj at 8
// bits (mlx-lm's gemma4_text quant_predicate), its two scales and the norms BF16.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace mkfixture {

struct Gemma4Options {
    // "" | layer-types (config.json layer_types has 3 entries for 4 layers) | no-router-scale
    // (moe: layer 0 without router.scale): a checkpoint rebox must refuse.
    // | no-per-layer-embeddings (--gemma4-e2b: no embed_tokens_per_layer)
    // | no-expert-up (--gemma4-moe --format mlx: layer 0 without experts.switch_glu.up_proj)
    // | expert-up-8bit (--gemma4-moe --format mlx: layer 0's up_proj at 8 bits, its gate at 4)
    // | per-layer-nvfp4 (--gemma4-e2b --format modelopt-nvfp4|ct-nvfp4: layer 0's
    // per_layer_input_gate NVFP4 with a factor other than 1, which the gemma4 graph ignores)
    std::string defect;
    bool moe = false;
    // The E2B / E4B layout: per-layer input embeddings, the last layers KV-shared with a
    // double-wide MLP (gemma4_files.cpp G4Layout); --format float, mcq, mlx, gptq or awq (mlx-lm
    // and GPTQModel drop the KV-shared layers' k_proj / v_proj / k_norm).
    bool e2b = false;
    // float (BF16) | mcq | mlx | gptq | awq | compressed-tensors | modelopt-nvfp4 | ct-nvfp4
    std::string format = "float";
    std::string recipe = "uniform4";  // mlx: an MLX recipe (mlx_recipe.hpp)
    // mlx: mlx-lm's conversion without -q (its names and sanitize, every tensor BF16, no
    // "quantization" block).
    bool mlx_unquantized = false;
    uint64_t seed = 1;
};

// Writes config.json, model.safetensors and the tokenizer files into out_dir (which exists and is
// empty); returns a one-line summary.
std::string write_gemma4_fixture(const std::filesystem::path& out_dir,
                                 const Gemma4Options& options);

}  // namespace mkfixture
