// verify's own Qwen3-VL vision family (llama.cpp v0.4.0 conversion/qwen3vl.py Qwen3VLVisionModel,
// names from gguf-py's tensor_mapping.py and constants.py): the patch embedding Conv3D cut at its
// temporal index 0 / 1 into v.patch_embd.weight / .weight.1 (F32, or F16 in an F16 file) with its
// bias v.patch_embd.bias, the learned pos_embed as v.position_embd.weight (F32 always), per block
// the fused attn.qkv kept whole as attn_qkv, attn.proj -> attn_out, the LayerNorms norm1 / norm2
// -> ln1 / ln2 with biases, mlp.linear_fc1 / linear_fc2 -> ffn_up / ffn_down; the merger's norm ->
// v.post_ln (hidden wide), linear_fc1 / linear_fc2 -> mm.0 / mm.2; deepstack merger i ->
// v.deepstack.L.norm / fc1 / fc2 with L = deepstack_visual_indexes[i] (its norm hidden x merge^2
// wide). KVs after the projector type: clip.use_gelu, clip.vision.spatial_merge_size,
// layer_norm_epsilon from text_config.rms_norm_eps (1e-6 without one), and
// clip.vision.is_deepstack_layers, one BOOL per tower layer. vision_config's num_heads / depth are
// the converter's num_attention_heads / num_hidden_layers; without an image_size it is
// int(sqrt(num_position_embeddings) x patch_size). Qwen3.5's tower (Qwen3_5(Moe)ForConditional-
// Generation) is the same class without deepstack mergers.
#include <cmath>
#include <nlohmann/json.hpp>

#include "verify/mmproj/ref_vision.hpp"

namespace rebox::verify_ref {
namespace qwen3vl_vision_ref {

std::vector<RefVisionTensor> tensors(const RefVisionNumbers& n) {
    const int64_t h = n.hidden, merged = h * n.merge * n.merge;
    const auto f32 = RefVisionType::f32, weight = RefVisionType::exact_float;
    std::vector<RefVisionTensor> out;
    for (const int64_t t : {int64_t{0}, int64_t{1}}) {
        RefVisionTensor part{t == 0 ? "v.patch_embd.weight" : "v.patch_embd.weight.1",
                             "visual.patch_embed.proj.weight",
                             {h, n.channels, n.temporal, n.patch_size, n.patch_size},
                             RefVisionType::f32_or_f16};
        part.slice_axis = 2;
        part.slice_begin = t;
        part.slice_count = 1;
        part.slice_drops_axis = true;
        out.push_back(std::move(part));
    }
    out.push_back({"v.patch_embd.bias", "visual.patch_embed.proj.bias", {h}, f32});
    out.push_back({"v.position_embd.weight", "visual.pos_embed.weight", {n.positions, h}, f32});
    const auto add = [&](const std::string& hf, const std::string& gg, std::vector<int64_t> shape) {
        const bool vector = shape.size() == 1;
        out.push_back({gg, hf, std::move(shape), vector ? f32 : weight});
    };
    for (int64_t layer = 0; layer < n.layers; ++layer) {
        const std::string hf = "visual.blocks." + std::to_string(layer) + ".";
        const std::string gg = "v.blk." + std::to_string(layer) + ".";
        add(hf + "norm1.weight", gg + "ln1.weight", {h});
        add(hf + "norm1.bias", gg + "ln1.bias", {h});
        add(hf + "attn.qkv.weight", gg + "attn_qkv.weight", {3 * h, h});
        add(hf + "attn.qkv.bias", gg + "attn_qkv.bias", {3 * h});
        add(hf + "attn.proj.weight", gg + "attn_out.weight", {h, h});
        add(hf + "attn.proj.bias", gg + "attn_out.bias", {h});
        add(hf + "norm2.weight", gg + "ln2.weight", {h});
        add(hf + "norm2.bias", gg + "ln2.bias", {h});
        add(hf + "mlp.linear_fc1.weight", gg + "ffn_up.weight", {n.ffn, h});
        add(hf + "mlp.linear_fc1.bias", gg + "ffn_up.bias", {n.ffn});
        add(hf + "mlp.linear_fc2.weight", gg + "ffn_down.weight", {h, n.ffn});
        add(hf + "mlp.linear_fc2.bias", gg + "ffn_down.bias", {h});
    }
    for (size_t i = 0; i < n.deepstack.size(); ++i) {
        const std::string hf = "visual.deepstack_merger_list." + std::to_string(i) + ".";
        const std::string gg = "v.deepstack." + std::to_string(n.deepstack[i]) + ".";
        add(hf + "norm.weight", gg + "norm.weight", {merged});
        add(hf + "norm.bias", gg + "norm.bias", {merged});
        add(hf + "linear_fc1.weight", gg + "fc1.weight", {merged, merged});
        add(hf + "linear_fc1.bias", gg + "fc1.bias", {merged});
        add(hf + "linear_fc2.weight", gg + "fc2.weight", {n.text_hidden, merged});
        add(hf + "linear_fc2.bias", gg + "fc2.bias", {n.text_hidden});
    }
    add("visual.merger.norm.weight", "v.post_ln.weight", {h});
    add("visual.merger.norm.bias", "v.post_ln.bias", {h});
    add("visual.merger.linear_fc1.weight", "mm.0.weight", {merged, merged});
    add("visual.merger.linear_fc1.bias", "mm.0.bias", {merged});
    add("visual.merger.linear_fc2.weight", "mm.2.weight", {n.text_hidden, merged});
    add("visual.merger.linear_fc2.bias", "mm.2.bias", {n.text_hidden});
    return out;
}

std::vector<GgufKV> kvs(const RefVisionNumbers& n, const nlohmann::json&, const nlohmann::json&,
                        const nlohmann::json& config) {
    std::vector<GgufKV> out = {
        {"clip.use_gelu", GgufValue::boolean(true)},
        {"clip.vision.spatial_merge_size", GgufValue::u32(static_cast<uint32_t>(n.merge))}};
    double eps = 1e-6;
    if (const auto text = config.find("text_config"); text != config.end() && text->is_object())
        if (const auto it = text->find("rms_norm_eps"); it != text->end() && it->is_number())
            eps = it->get<double>();
    out.push_back(
        {"clip.vision.attention.layer_norm_epsilon", GgufValue::f32(static_cast<float>(eps))});
    std::vector<GgufScalar> layers(static_cast<size_t>(n.layers), GgufScalar{false});
    for (const int64_t index : n.deepstack) layers[static_cast<size_t>(index)] = GgufScalar{true};
    if (!layers.empty())
        out.push_back({"clip.vision.is_deepstack_layers",
                       GgufValue::array_of(GgufType::BOOL, std::move(layers))});
    return out;
}

void prepare(nlohmann::json& vision) {
    const auto positions = vision.find("num_position_embeddings");
    const auto patch = vision.find("patch_size");
    if (!vision.contains("image_size") && positions != vision.end() && positions->is_number() &&
        patch != vision.end() && patch->is_number()) {
        const double count = positions->get<double>(), side = patch->get<double>();
        if (count >= 0 && count < 1e12 && side >= 0 && side < 1e6)
            vision["image_size"] = static_cast<int64_t>(std::sqrt(count) * side);
    }
    vision["num_attention_heads"] = vision["num_heads"];
    vision["num_hidden_layers"] = vision["depth"];
}

}  // namespace qwen3vl_vision_ref

const RefVisionFamily& ref_qwen3vl_vision() {
    static const RefVisionFamily kFamily{
        "qwen3vl_merger",
        // transformers' Qwen3VLVisionConfig
        {{"depth", "27"},
         {"hidden_size", "1152"},
         {"intermediate_size", "4304"},
         {"num_heads", "16"},
         {"in_channels", "3"},
         {"patch_size", "16"},
         {"spatial_merge_size", "2"},
         {"temporal_patch_size", "2"},
         {"out_hidden_size", "3584"},
         {"num_position_embeddings", "2304"},
         {"deepstack_visual_indexes", "[8, 16, 24]"}},
        qwen3vl_vision_ref::tensors,
        qwen3vl_vision_ref::kvs,
        qwen3vl_vision_ref::prepare,
    };
    return kFamily;
}

const RefVisionFamily& ref_qwen35_vision() {
    static const RefVisionFamily kFamily{
        "qwen3vl_merger",
        // transformers' Qwen3_5VisionConfig: no deepstack_visual_indexes (read as [])
        {{"depth", "27"},
         {"hidden_size", "1152"},
         {"intermediate_size", "4304"},
         {"num_heads", "16"},
         {"in_channels", "3"},
         {"patch_size", "16"},
         {"spatial_merge_size", "2"},
         {"temporal_patch_size", "2"},
         {"out_hidden_size", "3584"},
         {"num_position_embeddings", "2304"}},
        qwen3vl_vision_ref::tensors,
        qwen3vl_vision_ref::kvs,
        qwen3vl_vision_ref::prepare,
    };
    return kFamily;
}

}  // namespace rebox::verify_ref
