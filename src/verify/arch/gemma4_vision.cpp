// verify's own gemma4 vision family (llama.cpp v0.4.0 conversion/gemma.py Gemma4VisionAudioModel,
// tensor names from gguf-py's tensor_mapping.py, the clip.cpp gemma4v loader): the Linear patch
// embedding laid out as the Conv2D [width, 3, p, p] (F32, or F16 in an F16 file), the F32
// position table [2, position_embedding_size, width], per layer ln1 / attn_post_norm / ln2 /
// ffn_post_norm and the q / k norms (F32), the seven projections from their ".linear.weight"
// (the source's float type) with their four clipping bounds as [1] F32 where the checkpoint has
// them, std_bias / std_scale where it has them, and the projector embed_vision.embedding_projection
// as mm.input_projection.weight (not forced to F16). KVs: clip.vision.projector_type gemma4v (the
// mixed-modality key), image_size 224 as the class fixes it, and layer_norm_epsilon
// (vision_config.layer_norm_eps, else 1e-6).
#include <nlohmann/json.hpp>

#include "verify/mmproj/ref_vision.hpp"

namespace rebox::verify_ref {
namespace gemma4_vision_ref {

std::vector<RefVisionTensor> tensors(const RefVisionNumbers& n) {
    const std::string tower = "vision_tower.";
    const int64_t q = n.heads * n.head_dim, kv = n.kv_heads * n.head_dim;
    std::vector<RefVisionTensor> out;
    RefVisionTensor patch{"v.patch_embd.weight",
                          tower + "patch_embedder.input_proj.weight",
                          {n.hidden, 3 * n.patch_size * n.patch_size},
                          RefVisionType::f32_or_f16};
    patch.pixels_to_channels = true;
    out.push_back(patch);
    out.push_back({"v.position_embd.weight",
                   tower + "patch_embedder.position_embedding_table",
                   {2, n.axis_positions, n.hidden},
                   RefVisionType::f32});
    for (int64_t layer = 0; layer < n.layers; ++layer) {
        const std::string hf = tower + "encoder.layers." + std::to_string(layer) + ".";
        const std::string gg = "v.blk." + std::to_string(layer) + ".";
        const auto norm = [&](const std::string& hf_name, const std::string& gg_name,
                              int64_t width) {
            out.push_back(
                {gg + gg_name + ".weight", hf + hf_name + ".weight", {width}, RefVisionType::f32});
        };
        const auto linear = [&](const std::string& hf_name, const std::string& gg_name,
                                int64_t rows, int64_t cols) {
            out.push_back({gg + gg_name + ".weight",
                           hf + hf_name + ".linear.weight",
                           {rows, cols},
                           RefVisionType::exact_float});
            for (const char* bound : {"input_min", "input_max", "output_min", "output_max"}) {
                RefVisionTensor b{
                    gg + gg_name + "." + bound, hf + hf_name + "." + bound, {}, RefVisionType::f32};
                b.optional = true;
                b.scalar = true;
                out.push_back(b);
            }
        };
        norm("input_layernorm", "ln1", n.hidden);
        linear("self_attn.q_proj", "attn_q", q, n.hidden);
        linear("self_attn.k_proj", "attn_k", kv, n.hidden);
        linear("self_attn.v_proj", "attn_v", kv, n.hidden);
        linear("self_attn.o_proj", "attn_out", n.hidden, q);
        norm("self_attn.q_norm", "attn_q_norm", n.head_dim);
        norm("self_attn.k_norm", "attn_k_norm", n.head_dim);
        norm("post_attention_layernorm", "attn_post_norm", n.hidden);
        norm("pre_feedforward_layernorm", "ln2", n.hidden);
        linear("mlp.gate_proj", "ffn_gate", n.ffn, n.hidden);
        linear("mlp.up_proj", "ffn_up", n.ffn, n.hidden);
        linear("mlp.down_proj", "ffn_down", n.hidden, n.ffn);
        norm("post_feedforward_layernorm", "ffn_post_norm", n.hidden);
    }
    for (const char* name : {"std_bias", "std_scale"}) {
        RefVisionTensor t{std::string("v.") + name, tower + name, {n.hidden}, RefVisionType::f32};
        t.optional = true;
        out.push_back(t);
    }
    out.push_back({"mm.input_projection.weight",
                   "embed_vision.embedding_projection.weight",
                   {n.text_hidden, n.hidden},
                   RefVisionType::exact_float});
    return out;
}

std::vector<GgufKV> family_kvs(const RefVisionNumbers&, const nlohmann::json& vision,
                               const nlohmann::json&, const nlohmann::json&) {
    const double eps = vision.value("layer_norm_eps", 1e-6);
    return {{"clip.vision.attention.layer_norm_epsilon", GgufValue::f32(static_cast<float>(eps))}};
}

// Gemma4VisionAudioModel.__init__: image_size 224; RGB patches.
void prepare(nlohmann::json& vision) {
    vision["image_size"] = 224;
    vision["num_channels"] = 3;
}

}  // namespace gemma4_vision_ref

const RefVisionFamily& ref_gemma4_vision() {
    static const RefVisionFamily kGemma4{
        "gemma4v",
        // transformers' Gemma4VisionConfig
        {{"hidden_size", "768"},
         {"intermediate_size", "3072"},
         {"num_hidden_layers", "16"},
         {"num_attention_heads", "12"},
         {"num_key_value_heads", "12"},
         {"head_dim", "64"},
         {"patch_size", "16"},
         {"position_embedding_size", "10240"}},
        gemma4_vision_ref::tensors,
        gemma4_vision_ref::family_kvs,
        gemma4_vision_ref::prepare,
        "clip.vision.projector_type",
    };
    return kGemma4;
}

}  // namespace rebox::verify_ref
