// llama's per-layer attention rows (llama.cpp's llama loader), shared by the llama table and the
// tables that reuse llama's attention (mixtral): norms, q/k/v/o with optional biases, and the q/k
// rope row permutation (LlamaModel.permute).
#pragma once

#include "arch_tables.hpp"

namespace rebox::arch::detail {

inline constexpr TensorSpec kLlamaAttnNorm{"input_layernorm", "attn_norm", Presence::required,
                                           Presence::absent,  1,           {Dim::hidden}};
inline constexpr TensorSpec kLlamaAttnQ{"self_attn.q_proj",
                                        "attn_q",
                                        Presence::required,
                                        Presence::optional,
                                        2,
                                        {Dim::hidden, Dim::q_width},
                                        RowTransform::rope_pairs_q_heads};
inline constexpr TensorSpec kLlamaAttnK{"self_attn.k_proj",
                                        "attn_k",
                                        Presence::required,
                                        Presence::optional,
                                        2,
                                        {Dim::hidden, Dim::kv_width},
                                        RowTransform::rope_pairs_kv_heads};
inline constexpr TensorSpec kLlamaAttnV{"self_attn.v_proj", "attn_v", Presence::required,
                                        Presence::optional, 2,        {Dim::hidden, Dim::kv_width}};
inline constexpr TensorSpec kLlamaAttnOut{
    "self_attn.o_proj",         "attn_output", Presence::required, Presence::optional, 2,
    {Dim::q_width, Dim::hidden}};
inline constexpr TensorSpec kLlamaFfnNorm{
    "post_attention_layernorm", "ffn_norm", Presence::required, Presence::absent, 1, {Dim::hidden}};

}  // namespace rebox::arch::detail
