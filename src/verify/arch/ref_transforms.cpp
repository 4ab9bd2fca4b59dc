// Which transform applies to which GGUF tensor, written from llama.cpp's converter:
//  - llama (LlamaModel, MixtralModel): q_proj and k_proj weights and biases go through
//    LlamaModel.permute with n_head and n_head_kv heads;
//  - gemma, gemma2, gemma3 (GemmaModel, Gemma2Model, Gemma3Model.norm_shift): every tensor whose
//    name ends in "norm.weight" is written as weight + 1, q_norm / k_norm included;
//  - gemma3 and gemma-embedding (EmbeddingGemma(Gemma3Model)): token_embd keeps vocab_size rows
//    (the source may pad the embedding), and the norms' + 1 as gemma3;
//  - llama with llama3 rope scaling writes rope_freqs.weight; phi3 longrope its two factor tensors;
//  - mixture-of-experts models stack the experts into ffn_{gate,up,down}_exps.
#include "verify/arch/ref_transforms.hpp"

namespace rebox::verify_ref {
namespace {

// "blk.N.attn_q.weight" -> "attn_q.weight"; other names unchanged.
std::string_view without_layer(std::string_view name) {
    if (!name.starts_with("blk.")) return name;
    const size_t dot = name.find('.', 4);
    return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

bool is_gemma(std::string_view arch) {
    return arch == "gemma" || arch == "gemma2" || arch == "gemma3" || arch == "gemma-embedding";
}

}  // namespace

RefTransform ref_transform(std::string_view gguf_arch, std::string_view gguf_tensor) {
    RefTransform transform;
    const std::string_view name = without_layer(gguf_tensor);
    if (gguf_arch == "llama") {
        if (name == "attn_q.weight" || name == "attn_q.bias")
            transform.rows = RefRows::rope_q_heads;
        if (name == "attn_k.weight" || name == "attn_k.bias")
            transform.rows = RefRows::rope_kv_heads;
    }
    if (is_gemma(gguf_arch) && name.ends_with("norm.weight")) transform.plus_one = true;
    if ((gguf_arch == "gemma3" || gguf_arch == "gemma-embedding") &&
        gguf_tensor == "token_embd.weight")
        transform.rows = RefRows::first_vocab_rows;
    return transform;
}

bool ref_is_stacked_experts(std::string_view gguf_tensor) {
    const std::string_view name = without_layer(gguf_tensor);
    return gguf_tensor.starts_with("blk.") &&
           (name == "ffn_gate_exps.weight" || name == "ffn_up_exps.weight" ||
            name == "ffn_down_exps.weight");
}

bool ref_has_llama3_rope_freqs(std::string_view gguf_arch) { return gguf_arch == "llama"; }

bool ref_has_phi3_rope_factors(std::string_view gguf_arch) { return gguf_arch == "phi3"; }

}  // namespace rebox::verify_ref
