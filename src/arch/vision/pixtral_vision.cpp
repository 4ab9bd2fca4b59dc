// Mistral 3's Pixtral vision tower and its projector (Mistral3ForConditionalGeneration in HF
// format, Mistral Small 3.1 / 3.2), as llama.cpp v0.4.0's LlavaVisionModel -> MmprojModel writes
// the mmproj file (conversion/llava.py, conversion/base.py; names from gguf-py's tensor_mapping.py
// "pixtral-hf" / "mistral small 3.1 - hf" rows): vision_tower.patch_conv -> v.patch_embd.weight
// (F32 unless the file is F16, MmprojModel's patch rule), ln_pre -> v.pre_ln, per layer
// attention_norm -> ln1, attention.q/k/v/o_proj -> attn_q / attn_k / attn_v / attn_out (q and k
// through LlamaModel.permute with num_attention_heads for both, as the class does for HF-format
// weights), ffn_norm -> ln2, feed_forward.gate/up/down_proj -> ffn_gate / ffn_up / ffn_down; the
// projector's norm -> mm.input_norm, patch_merger.merging_layer -> mm.patch_merger.weight (F32
// unless F16, the same rule), linear_1 / linear_2 (biases when multimodal_projector_bias) -> mm.1 /
// mm.2; and v.token_embd.img_break, the [IMG_BREAK] row of the text embedding
// (language_model.model.embed_tokens.weight[id], id from tokenizer_config.json's
// added_tokens_decoder, else tokenizer.json's added_tokens), F32 as a 1-D tensor. clip.cpp's
// pixtral projector requires that row. v0.4.0's MmprojModel.filter_tensors drops every name
// holding "language_model." before LlavaVisionModel.modify_tensors sees the embedding, so the
// converter's own file of an HF checkpoint lacks it; rebox writes the row as the class's code
// intends (docs/architectures.md "Vision"). KVs after clip.projector_type pixtral:
// layer_norm_epsilon (vision_config.layer_norm_eps, 1e-5 without one), clip.use_silu or
// clip.use_gelu from hidden_act, clip.vision.spatial_merge_size from config.json's top level
// (Mistral3Config's default 2 without one).
#include <nlohmann/json.hpp>

#include "vision_architecture.hpp"

namespace rebox::arch::detail {
namespace pixtral_vision_record {

using D = VisionDim;
using T = VisionDtype;
using S = VisionSplit;

constexpr std::string_view kHfArchitectures[] = {"Mistral3ForConditionalGeneration"};
// "model.vision_tower." (transformers >= 4.52) reaches the table without "model."; the text
// embedding as "language_model.embed_tokens." in both layouts (plan/mmproj_plan.cpp).
constexpr std::string_view kPrefixes[] = {"vision_tower.", "multi_modal_projector.",
                                          "language_model.embed_tokens."};

constexpr VisionTensorSpec vec(std::string_view hf, std::string_view gguf, D length) {
    return {hf, gguf, {length}, 1};
}
constexpr VisionTensorSpec row(std::string_view hf, std::string_view gguf, D rows, D cols) {
    return {hf, gguf, {rows, cols}, 2};
}
constexpr VisionTensorSpec permuted(std::string_view hf, std::string_view gguf) {
    VisionTensorSpec spec = row(hf, gguf, D::hidden, D::hidden);
    spec.split = S::rope_pairs;
    return spec;
}
constexpr VisionTensorSpec bias(std::string_view hf, std::string_view gguf) {
    VisionTensorSpec spec = vec(hf, gguf, D::text_hidden);
    spec.optional = true;
    return spec;
}

constexpr VisionTensorSpec kFirst[] = {
    {"vision_tower.patch_conv.weight",
     "v.patch_embd.weight",
     {D::hidden, D::channels, D::patch, D::patch},
     4,
     T::f32_unless_f16},
    vec("vision_tower.ln_pre.weight", "v.pre_ln.weight", D::hidden),
};

constexpr VisionTensorSpec kLayer[] = {
    vec("vision_tower.transformer.layers.{N}.attention_norm.weight", "v.blk.{N}.ln1.weight",
        D::hidden),
    permuted("vision_tower.transformer.layers.{N}.attention.q_proj.weight",
             "v.blk.{N}.attn_q.weight"),
    permuted("vision_tower.transformer.layers.{N}.attention.k_proj.weight",
             "v.blk.{N}.attn_k.weight"),
    row("vision_tower.transformer.layers.{N}.attention.v_proj.weight", "v.blk.{N}.attn_v.weight",
        D::hidden, D::hidden),
    row("vision_tower.transformer.layers.{N}.attention.o_proj.weight", "v.blk.{N}.attn_out.weight",
        D::hidden, D::hidden),
    vec("vision_tower.transformer.layers.{N}.ffn_norm.weight", "v.blk.{N}.ln2.weight", D::hidden),
    row("vision_tower.transformer.layers.{N}.feed_forward.gate_proj.weight",
        "v.blk.{N}.ffn_gate.weight", D::intermediate, D::hidden),
    row("vision_tower.transformer.layers.{N}.feed_forward.up_proj.weight",
        "v.blk.{N}.ffn_up.weight", D::intermediate, D::hidden),
    row("vision_tower.transformer.layers.{N}.feed_forward.down_proj.weight",
        "v.blk.{N}.ffn_down.weight", D::hidden, D::intermediate),
};

constexpr VisionTensorSpec kLast[] = {
    vec("multi_modal_projector.norm.weight", "mm.input_norm.weight", D::hidden),
    {"multi_modal_projector.patch_merger.merging_layer.weight",
     "mm.patch_merger.weight",
     {D::hidden, D::merged},
     2,
     T::f32_unless_f16},
    row("multi_modal_projector.linear_1.weight", "mm.1.weight", D::text_hidden, D::hidden),
    bias("multi_modal_projector.linear_1.bias", "mm.1.bias"),
    row("multi_modal_projector.linear_2.weight", "mm.2.weight", D::text_hidden, D::text_hidden),
    bias("multi_modal_projector.linear_2.bias", "mm.2.bias"),
    {"language_model.embed_tokens.weight",
     "v.token_embd.img_break",
     {D::text_vocab, D::text_hidden},
     2,
     T::f32,
     ValueTransform::none,
     S::token_row},
};

// transformers' PixtralVisionConfig defaults (head_dim is hidden_size / num_attention_heads).
constexpr ConfigDefault kDefaults[] = {
    {"hidden_size", "1024"},       {"intermediate_size", "4096"}, {"num_hidden_layers", "24"},
    {"num_attention_heads", "16"}, {"num_channels", "3"},         {"image_size", "1024"},
    {"patch_size", "16"},          {"hidden_act", "\"gelu\""},    {"model_type", "\"pixtral\""},
};

// LlavaVisionModel reads spatial_merge_size from the global config (Mistral3Config's default 2,
// which AutoConfig gives the converter when config.json has none); the merger's width needs it.
void prepare_with_config(nlohmann::json& vision, const nlohmann::json& config) {
    const auto it = config.find("spatial_merge_size");
    vision["spatial_merge_size"] = it != config.end() ? *it : nlohmann::json(2);
}

void family_kvs(const VisionInputs& in, std::vector<GgufKV>* kvs, std::vector<Blocker>* blockers) {
    const nlohmann::json& vision = *in.vision;
    if (vision.value("model_type", std::string()) != "pixtral") {
        blockers->push_back({"config.json: vision_config.model_type",
                             "is " + vision["model_type"].dump() +
                                 ", not pixtral (llama.cpp's LlavaVisionModel: \"Unsupported "
                                 "model type\")",
                             "use the config.json that belongs to these weights"});
        return;
    }
    double eps = 1e-5;
    if (const auto it = vision.find("layer_norm_eps"); it != vision.end()) {
        if (!it->is_number()) {
            blockers->push_back({"config.json: vision_config.layer_norm_eps",
                                 "is " + it->dump() + ", not a number",
                                 "use the config.json that belongs to these weights"});
            return;
        }
        eps = it->get<double>();
    }
    kvs->push_back(
        {"clip.vision.attention.layer_norm_epsilon", GgufValue::f32(static_cast<float>(eps))});
    const nlohmann::json& act = vision["hidden_act"];
    if (act == "silu") {
        kvs->push_back({"clip.use_silu", GgufValue::boolean(true)});
    } else if (act == "gelu") {
        kvs->push_back({"clip.use_gelu", GgufValue::boolean(true)});
    } else {
        blockers->push_back({"config.json: vision_config.hidden_act",
                             "is " + act.dump() +
                                 "; llama.cpp's LlavaVisionModel writes silu or gelu only "
                                 "(\"Unsupported hidden_act\")",
                             "use the config.json that belongs to these weights"});
        return;
    }
    const nlohmann::json& merge = vision["spatial_merge_size"];
    if (!merge.is_number_integer() || merge.get<int64_t>() <= 0 || merge.get<int64_t>() > 64) {
        blockers->push_back({"config.json: spatial_merge_size",
                             "is " + merge.dump() + ", not a positive integer",
                             "use the config.json that belongs to these weights"});
        return;
    }
    kvs->push_back({"clip.vision.spatial_merge_size",
                    GgufValue::u32(static_cast<uint32_t>(merge.get<int64_t>()))});
}

constexpr VisionArchitecture kPixtralVision = [] {
    VisionArchitecture a;
    a.family = "mistral3";
    a.projector_type = "pixtral";
    a.hf_architectures = kHfArchitectures;
    a.prefixes = kPrefixes;
    a.first = kFirst;
    a.layer = kLayer;
    a.last = kLast;
    a.vision_defaults = kDefaults;
    a.prepare_with_config = prepare_with_config;
    a.row_token = "[IMG_BREAK]";
    a.family_kvs = family_kvs;
    return a;
}();

}  // namespace pixtral_vision_record

const VisionArchitecture& pixtral_vision_architecture() {
    return pixtral_vision_record::kPixtralVision;
}

}  // namespace rebox::arch::detail
