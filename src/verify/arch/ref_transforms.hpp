// verify's own table of which value transform each GGUF tensor of an architecture gets, from
// llama.cpp's converter (convert_hf_to_gguf.py): LlamaModel.permute of q/k (weights and biases),
// Gemma's "norm.weight" + 1, Gemma 3's embedding cut to vocab_size rows. Which architecture gets
// which is its record's (ref_arch.hpp); nothing here comes from the writer's registry (src/arch/).
#pragma once

#include <string_view>

namespace rebox::verify_ref {

enum class RefRows {
    none,
    rope_q_heads,      // rows permuted per query head (half-split -> interleaved pairs)
    rope_kv_heads,     // the same per key/value head
    first_vocab_rows,  // the GGUF keeps the first vocab_size rows of the source
    // Linear attention's value heads, grouped by key head in the source, tiled in the GGUF
    // (ref_linear_attention.hpp): rows after q and k (in_proj_qkv, conv1d), every row in units of
    // the value head dim (in_proj_z), in units of one row or value (in_proj_a / _b, A_log,
    // dt_bias), out_proj's columns in blocks of the value head dim.
    v_heads_after_qk,
    v_heads_rows,
    v_heads_single,
    v_heads_columns,
    // deepseek2's kv_b_proj ([heads * (nope + v), kv_lora_rank]) split in two: attn_k_b holds each
    // head's nope rows transposed, attn_v_b each head's v rows.
    mla_k_b,
    mla_v_b,
};

struct RefTransform {
    RefRows rows = RefRows::none;
    bool plus_one = false;  // the GGUF value is source weight + 1
    bool neg_exp = false;   // the GGUF value is -exp(source value) (ssm_a)
    bool squeeze = false;   // the source's size-1 dims are dropped (ssm_conv1d)
    bool reshape =
        false;  // the source's values in the record's mamba2_shape (ssm_a, ssm_d, ssm_norm)
};

RefTransform ref_transform(std::string_view gguf_arch, std::string_view gguf_tensor);

// llama.cpp's stacked expert tensors (blk.N.ffn_{gate,up,down}_exps.weight): value i of the GGUF
// tensor is value i % V of expert i / V.
bool ref_is_stacked_experts(std::string_view gguf_tensor);

}  // namespace rebox::verify_ref
