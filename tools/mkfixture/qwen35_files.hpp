// A tiny Qwen3.5 dense checkpoint (--arch qwen35), laid out as Qwen/Qwen3.5-*'s text model is
// stored (Qwen3_5ForCausalLM: "model.layers.N.*", "mtp.*", "lm_head.weight"; BF16): 4 layers with
// full_attention_interval 2 (layers 0 and 2 gated delta-net "linear_attn.*", 1 and 3 gated
// attention with q_proj twice as wide), 2 key heads and 4 value heads in the linear layers (so the
// converter's V-head reorder moves rows and columns), one MTP layer, rope_parameters with
// partial_rotary_factor and mrope_section; the small byte-level tokenizer with Qwen3.5's split
// regex (\p{M} in the letter runs).
// --arch qwen35moe: the same with Qwen3_5MoeForCausalLM's feed-forward in every layer (4 experts
// of width 32, 2 used, a shared expert of width 96 with its gate, no intermediate_size), the main
// layers' experts fused as transformers saves them (mlp.experts.gate_up_proj [E, 2F, hidden],
// mlp.experts.down_proj [E, hidden, F], no ".weight") and the MTP layer's per expert.
// --arch qwen3next: Qwen/Qwen3-Next-80B-A3B-Instruct's layout (Qwen3NextForCausalLM,
// model_type qwen3_next): the linear-attention input fused per key head as
// linear_attn.in_proj_qkvz [key heads * (2 * key dim + 2 * 2 * value dim), hidden] and
// linear_attn.in_proj_ba [2 * value heads, hidden]; the MoE feed-forward (experts per expert, as
// the published shards store them) in every layer; intermediate_size given; rope_theta and
// partial_rotary_factor at the top level (no rope_parameters, no M-RoPE) and no
// mtp_num_hidden_layers (the MTP layer is only in the weights).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace mkfixture {

struct Qwen35Options {
    // "" | layer-types (config.json layer_types makes layer 0 full attention, against the
    // interval llama.cpp's loader uses) | no-a-log (layer 0's A_log left out) | heads
    // (linear_num_value_heads 3, not a multiple of linear_num_key_heads 2) | expert-missing
    // (qwen35moe: the MTP layer's last expert without up_proj) | narrow-heads (mcq: value heads
    // of 16, so out_proj's head_v_dim column blocks are half a Q4_1 block): checkpoints rebox
    // must refuse. gdn-nvfp4 (qwen3next modelopt-nvfp4: in_proj_qkvz, in_proj_ba and out_proj
    // NVFP4 with ModelOpt's factors, which the qwen3next graph ignores: refused) | gdn-nvfp4-one
    // (the same with factors of exactly 1: converts).
    std::string defect;
    uint64_t seed = 1;
    bool moe = false;   // --arch qwen35moe (and qwen3next)
    bool next = false;  // --arch qwen3next
    // "float" (BF16) | "mcq" (every matrix but the routers mcq-v1 4-bit in groups of 32; the
    // routers, norms, conv1d, dt_bias and A_log F32; linear-attention heads of 32 so that
    // out_proj's head_v_dim column blocks are whole groups and Q4_1 blocks; qwen35moe's experts per
    // expert) | "mlx" (mlx-lm's qwen3_5 / qwen3_5_moe checkpoint after its sanitize: 4 bits in
    // groups of 64, routers 8 bits, value heads of 64, no MTP layer, norms already + 1) | "gptq" |
    // "awq" | "compressed-tensors" (4 bits in groups of 32, GPTQModel's module choice: in_proj_a /
    // in_proj_b and the MTP layer float; value heads of 32; qwen35moe as each tool's uploads:
    // GPTQ the routed experts only, compressed-tensors all but linear_attn) | "modelopt-nvfp4" |
    // "ct-nvfp4" (every matrix but the embedding and routers NVFP4; value heads of 64, whole GGUF
    // NVFP4 blocks). narrow-heads: value heads of half a GGUF block (16; NVFP4 32). qwen3next:
    // "float", "mcq", "mlx" (mlx-lm's qwen3_next: "model.*", no text_config), "gptq", "awq",
    // "compressed-tensors" (in_proj_qkvz and in_proj_ba quantized too) or "modelopt-nvfp4"
    // (nvidia/Qwen3-Next-80B-A3B-Instruct-NVFP4's layout: experts and o_proj NVFP4).
    std::string format = "float";
    // --qwen35-vision (float only): Qwen3_5(Moe)ForConditionalGeneration as published, the text
    // model under "model.language_model." with text_config, and the Qwen3.5 vision tower under
    // "model.visual." (qwen3vl_files.hpp's tower without deepstack mergers, its merger 64 wide),
    // vision_config and preprocessor_config.json.
    bool vision = false;
    // --hidden (float only): 64, or a multiple of 256 for a wide fixture whose every matrix row is
    // a multiple of 256 values (head_dim hidden / 2, linear-attention heads of hidden / 4,
    // feed-forward 2 * hidden, experts and shared expert hidden).
    int64_t hidden = 64;
};

// Writes config.json, model.safetensors and the tokenizer files into out_dir (which exists and is
// empty); returns a one-line summary.
std::string write_qwen35_fixture(const std::filesystem::path& out_dir,
                                 const Qwen35Options& options);

}  // namespace mkfixture
