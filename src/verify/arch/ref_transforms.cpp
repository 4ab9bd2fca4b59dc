// Which transform applies to which GGUF tensor: the flags of the architecture's own record
// (ref_arch.hpp, one file per architecture in this folder), applied to the GGUF tensor names
// llama.cpp's converter gives them: q/k weights and biases permuted, every tensor whose name ends
// in "norm.weight" (q_norm / k_norm included) written as weight + 1, token_embd cut to vocab_size
// rows; mixture-of-experts models stack the experts into ffn_{gate,up,down}_exps.
#include "verify/arch/ref_transforms.hpp"

#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref {
namespace {

// "blk.N.attn_q.weight" -> "attn_q.weight"; other names unchanged.
std::string_view without_layer(std::string_view name) {
    if (!name.starts_with("blk.")) return name;
    const size_t dot = name.find('.', 4);
    return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

}  // namespace

RefTransform ref_transform(std::string_view gguf_arch, std::string_view gguf_tensor) {
    RefTransform transform;
    const RefArch* arch = find_ref_arch(gguf_arch);
    if (arch == nullptr) return transform;
    const std::string_view name = without_layer(gguf_tensor);
    if (arch->rope_permute_qk) {
        if (name == "attn_q.weight" || name == "attn_q.bias")
            transform.rows = RefRows::rope_q_heads;
        if (name == "attn_k.weight" || name == "attn_k.bias")
            transform.rows = RefRows::rope_kv_heads;
    }
    if (arch->norm_plus_one && name.ends_with("norm.weight") &&
        !(arch->linear_attention && name == "ssm_norm.weight"))
        transform.plus_one = true;
    if (arch->linear_attention && !arch->qkvz_split) {
        if (name == "attn_qkv.weight" || name == "ssm_conv1d.weight")
            transform.rows = RefRows::v_heads_after_qk;
        if (name == "attn_gate.weight") transform.rows = RefRows::v_heads_rows;
        if (name == "ssm_beta.weight" || name == "ssm_alpha.weight" || name == "ssm_a" ||
            name == "ssm_dt.bias")
            transform.rows = RefRows::v_heads_single;
        if (name == "ssm_out.weight") transform.rows = RefRows::v_heads_columns;
    }
    if (arch->linear_attention) {
        transform.neg_exp = name == "ssm_a";
        transform.squeeze = name == "ssm_conv1d.weight";
    }
    if (arch->mamba2) {
        transform.neg_exp = name == "ssm_a";
        transform.squeeze = name == "ssm_conv1d.weight";
        transform.reshape = name == "ssm_a" || name == "ssm_d" || name == "ssm_norm.weight";
    }
    if (arch->mla_kv_b_split && name == "attn_k_b.weight") transform.rows = RefRows::mla_k_b;
    if (arch->mla_kv_b_split && name == "attn_v_b.weight") transform.rows = RefRows::mla_v_b;
    if (arch->vocab_rows_cut && gguf_tensor == "token_embd.weight")
        transform.rows = RefRows::first_vocab_rows;
    return transform;
}

bool ref_is_stacked_experts(std::string_view gguf_tensor) {
    const std::string_view name = without_layer(gguf_tensor);
    return gguf_tensor.starts_with("blk.") &&
           (name == "ffn_gate_exps.weight" || name == "ffn_up_exps.weight" ||
            name == "ffn_down_exps.weight");
}

}  // namespace rebox::verify_ref
