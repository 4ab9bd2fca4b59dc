// llama-quantize's tensor roles and its list of tensors that are never quantized.
#include "recipe/tensor_category.hpp"

namespace rebox {
namespace {

bool contains(std::string_view name, std::string_view part) {
    return name.find(part) != std::string_view::npos;
}

// Substrings whose presence keeps a tensor as it is (tensor_allows_quantization).
constexpr std::string_view kNeverQuantized[] = {
    "_norm.weight",
    "ffn_gate_inp.weight",  // MoE router
    "ffn_gate_tid2eid.weight",
    "altup",
    "laurel",
    "per_layer_model_proj",
    "ssm_conv1d",
    "shortconv.conv.weight",
    "indexer.k_proj.weight",
    "indexer.q_proj.weight",
    "time_mix_first.weight",
    "time_mix_w0.weight",
    "time_mix_w1.weight",
    "time_mix_w2.weight",
    "time_mix_v0.weight",
    "time_mix_v1.weight",
    "time_mix_v2.weight",
    "time_mix_a0.weight",
    "time_mix_a1.weight",
    "time_mix_a2.weight",
    "time_mix_g1.weight",
    "time_mix_g2.weight",
    "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight",
    "attn_rel_b.weight",
    ".position_embd",
    "sam.pos_embd",
    "sam.neck.",
    "sam.net_",
    ".rel_pos",
    ".patch_embd",
    ".patch_merger",
    "a.rvq.codebook",
    "mm.a.code_embd",
};

}  // namespace

TensorCategory tensor_category(std::string_view name) {
    if (name == "output.weight") return TensorCategory::output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight")
        return TensorCategory::token_embd;
    if (contains(name, "attn_qkv.weight")) return TensorCategory::attn_qkv;
    if (contains(name, "attn_kv_b.weight")) return TensorCategory::attn_kv_b;
    if (contains(name, "attn_v.weight")) return TensorCategory::attn_v;
    if (contains(name, "attn_k.weight")) return TensorCategory::attn_k;
    if (contains(name, "attn_q.weight")) return TensorCategory::attn_q;
    if (contains(name, "attn_output.weight")) return TensorCategory::attn_output;
    if (contains(name, "ffn_up")) return TensorCategory::ffn_up;
    if (contains(name, "ffn_gate")) return TensorCategory::ffn_gate;
    if (contains(name, "ffn_down")) return TensorCategory::ffn_down;
    return TensorCategory::other;
}

bool category_is_attn_v(TensorCategory category) {
    return category == TensorCategory::attn_v || category == TensorCategory::attn_qkv ||
           category == TensorCategory::attn_kv_b;
}

bool tensor_allows_quantization(std::string_view name, int n_dims, bool quantize_output) {
    if (n_dims < 2) return false;
    constexpr std::string_view kWeight = "weight";
    // llama's test, unsigned arithmetic included: the last "weight" ends the name (and a 5-byte
    // name, where npos equals size() - 6, passes too).
    if (name.rfind(kWeight) != name.size() - kWeight.size()) return false;
    if (!quantize_output && name == "output.weight") return false;
    // LLM_TN(arch)(LLM_TENSOR_POS_EMBD / LLM_TENSOR_TOKEN_TYPES, "weight"): the same names for
    // every architecture.
    if (name == "position_embd.weight" || name == "token_types.weight") return false;
    for (std::string_view part : kNeverQuantized)
        if (contains(name, part)) return false;
    return true;
}

}  // namespace rebox
