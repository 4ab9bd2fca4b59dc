// Which tensors llama-quantize quantizes and the broad role it gives each one
// (src/llama-quant.cpp tensor_allows_quantization, tensor_get_category, v0.4.0). Names are GGUF
// tensor names; the rules are substring tests on them, independent of the architecture.
#pragma once

#include <string_view>

namespace rebox {

enum class TensorCategory {
    token_embd,
    attn_q,
    attn_v,
    attn_k,
    attn_qkv,
    attn_kv_b,
    attn_output,
    ffn_up,
    ffn_gate,
    ffn_down,
    output,
    other,
};

TensorCategory tensor_category(std::string_view name);
// attn_v, attn_qkv and attn_kv_b: the tensors counted by n_attention_wv.
bool category_is_attn_v(TensorCategory category);

// tensor_allows_quantization: at least 2 dims, a name ending in "weight", not a norm, not
// output.weight when quantize_output is false (--leave-output-tensor), and none of the small or
// special tensors llama-quantize leaves as they are (MoE router, positional embeddings, conv1d,
// RWKV time_mix, multimodal patch/position tensors, ...).
bool tensor_allows_quantization(std::string_view name, int n_dims, bool quantize_output);

}  // namespace rebox
