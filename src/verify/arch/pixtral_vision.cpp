// verify's own Mistral 3 Pixtral family (llama.cpp v0.4.0 conversion/llava.py LlavaVisionModel on
// an HF-format Mistral3ForConditionalGeneration, tensor names from gguf-py's tensor_mapping.py, the
// clip.cpp pixtral loader): patch_conv -> v.patch_embd.weight (F32, or F16 in an F16 file), ln_pre
// -> v.pre_ln (F32), per layer attention_norm / ffn_norm -> ln1 / ln2 (F32), q_proj / k_proj
// permuted per head as LlamaModel.permute(w, n_head, n_head) does, v_proj / o_proj and the three
// feed-forward projections in the source's float type; the projector's norm -> mm.input_norm
// (F32), patch_merger.merging_layer -> mm.patch_merger.weight (F32 or F16 like the patch
// embedding), linear_1 / linear_2 -> mm.1 / mm.2 (biases F32 where the checkpoint has them); and
// v.token_embd.img_break, row [IMG_BREAK] of the text embedding as F32 [width]. KVs after
// clip.projector_type pixtral: layer_norm_epsilon (layer_norm_eps, else 1e-5), clip.use_silu or
// clip.use_gelu from hidden_act, clip.vision.spatial_merge_size (config.json's, else 2).
#include <nlohmann/json.hpp>

#include "verify/mmproj/ref_vision.hpp"

namespace rebox::verify_ref {
namespace pixtral_vision_ref {

std::vector<RefVisionTensor> tensors(const RefVisionNumbers& n) {
    const int64_t h = n.hidden, f = n.ffn;
    const auto f32 = RefVisionType::f32, weight = RefVisionType::exact_float;
    std::vector<RefVisionTensor> out;
    out.push_back({"v.patch_embd.weight",
                   "vision_tower.patch_conv.weight",
                   {h, n.channels, n.patch_size, n.patch_size},
                   RefVisionType::f32_or_f16});
    out.push_back({"v.pre_ln.weight", "vision_tower.ln_pre.weight", {h}, f32});
    for (int64_t layer = 0; layer < n.layers; ++layer) {
        const std::string hf = "vision_tower.transformer.layers." + std::to_string(layer) + ".";
        const std::string gg = "v.blk." + std::to_string(layer) + ".";
        out.push_back({gg + "ln1.weight", hf + "attention_norm.weight", {h}, f32});
        for (const char* qk : {"q", "k"}) {
            RefVisionTensor t{gg + "attn_" + qk + ".weight",
                              hf + "attention." + qk + "_proj.weight",
                              {h, h},
                              weight};
            t.rope_heads = n.heads;
            out.push_back(std::move(t));
        }
        out.push_back({gg + "attn_v.weight", hf + "attention.v_proj.weight", {h, h}, weight});
        out.push_back({gg + "attn_out.weight", hf + "attention.o_proj.weight", {h, h}, weight});
        out.push_back({gg + "ln2.weight", hf + "ffn_norm.weight", {h}, f32});
        out.push_back(
            {gg + "ffn_gate.weight", hf + "feed_forward.gate_proj.weight", {f, h}, weight});
        out.push_back({gg + "ffn_up.weight", hf + "feed_forward.up_proj.weight", {f, h}, weight});
        out.push_back(
            {gg + "ffn_down.weight", hf + "feed_forward.down_proj.weight", {h, f}, weight});
    }
    out.push_back({"mm.input_norm.weight", "multi_modal_projector.norm.weight", {h}, f32});
    out.push_back({"mm.patch_merger.weight",
                   "multi_modal_projector.patch_merger.merging_layer.weight",
                   {h, h * n.merge * n.merge},
                   RefVisionType::f32_or_f16});
    for (const char* k : {"1", "2"}) {
        const std::string hf = std::string("multi_modal_projector.linear_") + k;
        out.push_back({std::string("mm.") + k + ".weight",
                       hf + ".weight",
                       {n.text_hidden, k[0] == '1' ? h : n.text_hidden},
                       weight});
        RefVisionTensor bias{std::string("mm.") + k + ".bias", hf + ".bias", {n.text_hidden}, f32};
        bias.optional = true;
        out.push_back(std::move(bias));
    }
    RefVisionTensor row{"v.token_embd.img_break",
                        "language_model.model.embed_tokens.weight",
                        {n.text_vocab, n.text_hidden},
                        f32};
    row.slice_axis = 0;
    row.slice_begin = n.token_row;
    row.slice_count = 1;
    row.slice_drops_axis = true;
    out.push_back(std::move(row));
    return out;
}

std::vector<GgufKV> kvs(const RefVisionNumbers& n, const nlohmann::json& vision,
                        const nlohmann::json&, const nlohmann::json&) {
    const auto eps = vision.find("layer_norm_eps");
    const double value = eps != vision.end() && eps->is_number() ? eps->get<double>() : 1e-5;
    std::vector<GgufKV> out = {
        {"clip.vision.attention.layer_norm_epsilon", GgufValue::f32(static_cast<float>(value))}};
    const auto act = vision.find("hidden_act");
    if (act != vision.end() && *act == "silu")
        out.push_back({"clip.use_silu", GgufValue::boolean(true)});
    if (act != vision.end() && *act == "gelu")
        out.push_back({"clip.use_gelu", GgufValue::boolean(true)});
    out.push_back(
        {"clip.vision.spatial_merge_size", GgufValue::u32(static_cast<uint32_t>(n.merge))});
    return out;
}

// LlavaVisionModel reads spatial_merge_size from the global config; Mistral3Config's default is 2.
void merge_from_config(nlohmann::json& vision, const nlohmann::json& config) {
    vision["spatial_merge_size"] =
        config.contains("spatial_merge_size") ? config["spatial_merge_size"] : nlohmann::json(2);
}

}  // namespace pixtral_vision_ref

const RefVisionFamily& ref_pixtral_vision() {
    static const RefVisionFamily kFamily = [] {
        RefVisionFamily family{
            "pixtral",
            // transformers' PixtralVisionConfig
            {{"hidden_size", "1024"},
             {"intermediate_size", "4096"},
             {"num_hidden_layers", "24"},
             {"num_attention_heads", "16"},
             {"num_channels", "3"},
             {"image_size", "1024"},
             {"patch_size", "16"},
             {"hidden_act", "\"gelu\""}},
            pixtral_vision_ref::tensors,
            pixtral_vision_ref::kvs,
        };
        family.row_token = "[IMG_BREAK]";
        family.prepare_with_config = pixtral_vision_ref::merge_from_config;
        return family;
    }();
    return kFamily;
}

}  // namespace rebox::verify_ref
