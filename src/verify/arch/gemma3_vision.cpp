// verify's own gemma3 vision family (llama.cpp v0.4.0 conversion/gemma.py Gemma3VisionModel,
// tensor names from gguf-py's tensor_mapping.py): SigLIP's embeddings F32 (the ".embeddings."
// override), per layer q/k/v/out, the two layer norms and fc1 -> ffn_up / fc2 -> ffn_down with
// biases, post_layernorm, the projector's mm_input_projection_weight (forced F16, not transposed)
// and mm_soft_emb_norm (+ 1); clip.vision.attention.layer_norm_epsilon, clip.use_gelu and the
// projector's pooling factor when it is not 4.
#include <cmath>
#include <nlohmann/json.hpp>

#include "verify/mmproj/ref_vision.hpp"

namespace rebox::verify_ref {
namespace gemma3_vision_ref {

std::vector<RefVisionTensor> tensors(const RefVisionNumbers& n) {
    const std::string tower = "vision_tower.vision_model.";
    const int64_t side = n.patch_size ? n.image_size / n.patch_size : 0;
    std::vector<RefVisionTensor> out = {
        {"v.patch_embd.weight",
         tower + "embeddings.patch_embedding.weight",
         {n.hidden, n.channels, n.patch_size, n.patch_size},
         RefVisionType::f32},
        {"v.patch_embd.bias",
         tower + "embeddings.patch_embedding.bias",
         {n.hidden},
         RefVisionType::f32},
        {"v.position_embd.weight",
         tower + "embeddings.position_embedding.weight",
         {side * side, n.hidden},
         RefVisionType::f32},
    };
    for (int64_t layer = 0; layer < n.layers; ++layer) {
        const std::string hf = tower + "encoder.layers." + std::to_string(layer) + ".";
        const std::string gg = "v.blk." + std::to_string(layer) + ".";
        const auto pair = [&](const std::string& hf_stem, const std::string& gg_stem,
                              std::vector<int64_t> weight_shape, int64_t bias_length) {
            const bool vector = weight_shape.size() == 1;
            out.push_back({gg + gg_stem + ".weight", hf + hf_stem + ".weight",
                           std::move(weight_shape),
                           vector ? RefVisionType::f32 : RefVisionType::exact_float});
            out.push_back({gg + gg_stem + ".bias",
                           hf + hf_stem + ".bias",
                           {bias_length},
                           RefVisionType::f32});
        };
        pair("layer_norm1", "ln1", {n.hidden}, n.hidden);
        pair("self_attn.q_proj", "attn_q", {n.hidden, n.hidden}, n.hidden);
        pair("self_attn.k_proj", "attn_k", {n.hidden, n.hidden}, n.hidden);
        pair("self_attn.v_proj", "attn_v", {n.hidden, n.hidden}, n.hidden);
        pair("self_attn.out_proj", "attn_out", {n.hidden, n.hidden}, n.hidden);
        pair("layer_norm2", "ln2", {n.hidden}, n.hidden);
        pair("mlp.fc1", "ffn_up", {n.ffn, n.hidden}, n.ffn);
        pair("mlp.fc2", "ffn_down", {n.hidden, n.ffn}, n.hidden);
    }
    out.push_back(
        {"v.post_ln.weight", tower + "post_layernorm.weight", {n.hidden}, RefVisionType::f32});
    out.push_back(
        {"v.post_ln.bias", tower + "post_layernorm.bias", {n.hidden}, RefVisionType::f32});
    out.push_back({"mm.input_projection.weight",
                   "multi_modal_projector.mm_input_projection_weight",
                   {n.hidden, n.text_hidden},
                   RefVisionType::f16_or_exact});
    out.push_back({"mm.soft_emb_norm.weight",
                   "multi_modal_projector.mm_soft_emb_norm.weight",
                   {n.hidden},
                   RefVisionType::f32,
                   true});
    return out;
}

std::vector<GgufKV> family_kvs(const RefVisionNumbers& n, const nlohmann::json& vision,
                               const nlohmann::json& preprocessor, const nlohmann::json&) {
    std::vector<GgufKV> kvs;
    const double eps = vision.value("layer_norm_eps", 1e-6);
    kvs.push_back(
        {"clip.vision.attention.layer_norm_epsilon", GgufValue::f32(static_cast<float>(eps))});
    kvs.push_back({"clip.use_gelu", GgufValue::boolean(true)});
    // Tokens per image: preprocessor's image_seq_length (256 when absent); the projector pools the
    // patch grid down to its square root per side.
    const int64_t tokens = preprocessor.value("image_seq_length", int64_t{256});
    const auto per_side = static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(tokens))));
    if (per_side > 0 && n.patch_size > 0) {
        const int64_t pooling = n.image_size / n.patch_size / per_side;
        if (pooling != 4 && pooling > 0)
            kvs.push_back({"clip.vision.projector.scale_factor",
                           GgufValue::u32(static_cast<uint32_t>(pooling))});
    }
    return kvs;
}

}  // namespace gemma3_vision_ref

const RefVisionFamily& ref_gemma3_vision() {
    static const RefVisionFamily kGemma3{
        "gemma3",
        // transformers' SiglipVisionConfig
        {{"hidden_size", "768"},
         {"intermediate_size", "3072"},
         {"num_hidden_layers", "12"},
         {"num_attention_heads", "12"},
         {"num_channels", "3"},
         {"image_size", "224"},
         {"patch_size", "16"},
         {"layer_norm_eps", "1e-06"}},
        gemma3_vision_ref::tensors,
        gemma3_vision_ref::family_kvs,
    };
    return kGemma3;
}

}  // namespace rebox::verify_ref
