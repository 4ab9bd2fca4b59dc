// A tiny Nemotron-H dense checkpoint (--arch nemotron_h), laid out as nvidia/NVIDIA-Nemotron-Nano-
// 9B-v2 is stored (NemotronHForCausalLM: "backbone.embeddings", "backbone.layers.N.norm",
// "backbone.layers.N.mixer.*", "backbone.norm_f", "lm_head"; BF16): 6 layers of
// hybrid_override_pattern "M-M*-M" (Mamba2 'M', MLP '-', attention '*'); Mamba2 mixers of 8 heads
// of 16 in 2 groups, state 16, conv kernel 4 with a conv bias; attention of 4 heads of 32 with
// 2 key/value heads (head_dim * heads != hidden_size, as in the 9B); relu² MLPs of width 128; the
// small byte-level tokenizer, vocab_size rounded up to a multiple of 8. config.json carries the
// fields NemotronHConfig saves.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace mkfixture {

struct NemotronHOptions {
    // "" | pattern-length (hybrid_override_pattern one layer short) | latent-missing
    // (nemotron_h_moe: the --nemotron-h-latent checkpoint without layer 1's fc2_latent_proj) |
    // mtp-partial (nemotron_h_moe: the --nemotron-h-mtp checkpoint without
    // mtp.layers.1.final_layernorm) | mtp-no-count (its mtp.* tensors with a config.json without
    // num_nextn_predict_layers) | mlx-missing-scales (nemotron_h_moe --format mlx: layer 1's
    // switch_mlp.fc1 without its .scales) | gptq-actorder (--format gptq with desc_act and a true
    // act-order g_idx in every projection): checkpoints rebox must refuse.
    std::string defect;
    uint64_t seed = 1;
    // "float" (BF16) | "mcq" (every matrix mcq-v1 4-bit in groups of 32: embeddings, in_proj,
    // out_proj, q/k/v/o, up/down, lm_head; the norms, conv1d and its bias, dt_bias, A_log and D
    // F32) | "modelopt-nvfp4" | "mlx" (mlx-lm's nemotron_h layout: conv1d [channels, kernel,
    // 1], the experts stacked as switch_mlp.fc1 (up) / fc2 (down), no mtp.* tensors; every
    // Linear and the embedding 4-bit / 64 where 64 divides the input width, the routers, norms
    // and Mamba2 vectors BF16) | "gptq" | "awq" | "compressed-tensors" (every *_proj Linear 4-bit
    // in groups of 32; embeddings, lm_head and the routers float).
    std::string format = "float";
    // --arch nemotron_h_moe: NemotronHForCausalLM with num_experts_per_tok (Nemotron 3 Nano):
    // pattern "MEM*EM", each 'E' layer a router mixer.gate [4, hidden] with its
    // e_score_correction_bias, 4 relu² experts of 64 (up/down only, 2 used) and a shared expert
    // of 64; n_group / topk_group 1, routed_scaling_factor 2.5, norm_topk_prob.
    bool moe = false;
    // nemotron_h_moe with Nemotron 3 Super's LatentMoE (NVIDIA-Nemotron-3-Super-120B-A12B's
    // config.json moe_latent_size, transformers' NemotronHMoE): moe_latent_size 32 (half the
    // hidden size), each 'E' layer with mixer.fc1_latent_proj [32, hidden] and
    // mixer.fc2_latent_proj [hidden, 32], its experts' up [64, 32] and down [32, 64].
    bool latent = false;
    // nemotron_h_moe with Nemotron 3 Super's MTP layers (num_nextn_predict_layers 1,
    // mtp_hybrid_override_pattern "*E"): mtp.layers.0.{enorm, hnorm, eh_proj, norm, mixer.q/k/v/
    // o_proj} and mtp.layers.1.{norm, mixer.<the 'E' mixer>, final_layernorm}; with `latent` its
    // MoE sub-layer has the latent projections too, as Super's has.
    bool mtp = false;
};

// Writes config.json, model.safetensors and the tokenizer files into out_dir (which exists and is
// empty); returns a one-line summary.
std::string write_nemotron_h_fixture(const std::filesystem::path& out_dir,
                                     const NemotronHOptions& options);

}  // namespace mkfixture
