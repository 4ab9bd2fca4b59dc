// verify's own Qwen2-VL / Qwen2.5-VL vision families (llama.cpp v0.4.0 conversion/qwenvl.py
// Qwen2VLVisionModel, names from gguf-py's tensor_mapping.py): the patch embedding Conv3D cut at
// its temporal index 0 / 1 into v.patch_embd.weight / .weight.1 (F32, or F16 in an F16 file), per
// block the fused attn.qkv weight and bias cut into thirds (q, k, v), attn.proj -> attn_out, the
// norms (Qwen2-VL with biases) and the MLP (Qwen2-VL fc1 / fc2 -> ffn_up / ffn_down, embed_dim x
// mlp_ratio wide; Qwen2.5-VL gate / up / down with biases), the merger's ln_q -> v.post_ln and
// mlp.0 / mlp.2 -> mm.0 / mm.2. KVs after the projector type: Qwen2.5-VL's clip.use_silu and
// clip.vision.n_wa_pattern (fullatt_block_indexes[0] + 1), then layer_norm_epsilon from the
// top-level rms_norm_eps (1e-6 without one). Qwen2-VL's vision_config is read with
// intermediate_size = hidden_size and hidden_size = embed_dim, as the converter renames them.
#include <nlohmann/json.hpp>

#include "verify/mmproj/ref_vision.hpp"

namespace rebox::verify_ref {
namespace qwen2vl_vision_ref {

std::vector<RefVisionTensor> tensors(const RefVisionNumbers& n, bool qwen25) {
    const int64_t h = n.hidden;
    const int64_t merged = h * n.merge * n.merge, mlp = qwen25 ? n.ffn : h * n.mlp_ratio;
    const auto f32 = RefVisionType::f32, weight = RefVisionType::exact_float;
    std::vector<RefVisionTensor> out;
    // The patch embedding's type: F32, or F16 only in an F16 file (exact_float accepts F16 / BF16
    // too; the two slices are checked to F32 or F16 by patch_type below).
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
    for (int64_t layer = 0; layer < n.layers; ++layer) {
        const std::string hf = "visual.blocks." + std::to_string(layer) + ".";
        const std::string gg = "v.blk." + std::to_string(layer) + ".";
        const auto add = [&](const std::string& hf_name, const std::string& gg_name,
                             std::vector<int64_t> shape) {
            const bool vector = shape.size() == 1;
            out.push_back({gg + gg_name, hf + hf_name, std::move(shape), vector ? f32 : weight});
        };
        add("norm1.weight", "ln1.weight", {h});
        if (!qwen25) add("norm1.bias", "ln1.bias", {h});
        const char* parts[] = {"attn_q", "attn_k", "attn_v"};
        for (int64_t k = 0; k < 3; ++k)
            for (const bool bias : {false, true}) {
                RefVisionTensor part{
                    gg + parts[k] + (bias ? ".bias" : ".weight"),
                    hf + (bias ? "attn.qkv.bias" : "attn.qkv.weight"),
                    bias ? std::vector<int64_t>{3 * h} : std::vector<int64_t>{3 * h, h},
                    bias ? f32 : weight};
                part.slice_axis = 0;
                part.slice_begin = k * h;
                part.slice_count = h;
                out.push_back(std::move(part));
            }
        add("attn.proj.weight", "attn_out.weight", {h, h});
        add("attn.proj.bias", "attn_out.bias", {h});
        add("norm2.weight", "ln2.weight", {h});
        if (!qwen25) add("norm2.bias", "ln2.bias", {h});
        if (qwen25) {
            add("mlp.gate_proj.weight", "ffn_gate.weight", {mlp, h});
            add("mlp.gate_proj.bias", "ffn_gate.bias", {mlp});
            add("mlp.up_proj.weight", "ffn_up.weight", {mlp, h});
            add("mlp.up_proj.bias", "ffn_up.bias", {mlp});
            add("mlp.down_proj.weight", "ffn_down.weight", {h, mlp});
            add("mlp.down_proj.bias", "ffn_down.bias", {h});
        } else {
            add("mlp.fc1.weight", "ffn_up.weight", {mlp, h});
            add("mlp.fc1.bias", "ffn_up.bias", {mlp});
            add("mlp.fc2.weight", "ffn_down.weight", {h, mlp});
            add("mlp.fc2.bias", "ffn_down.bias", {h});
        }
    }
    out.push_back({"v.post_ln.weight", "visual.merger.ln_q.weight", {h}, f32});
    if (!qwen25) out.push_back({"v.post_ln.bias", "visual.merger.ln_q.bias", {h}, f32});
    out.push_back({"mm.0.weight", "visual.merger.mlp.0.weight", {merged, merged}, weight});
    out.push_back({"mm.0.bias", "visual.merger.mlp.0.bias", {merged}, f32});
    out.push_back({"mm.2.weight", "visual.merger.mlp.2.weight", {n.text_hidden, merged}, weight});
    out.push_back({"mm.2.bias", "visual.merger.mlp.2.bias", {n.text_hidden}, f32});
    return out;
}

std::vector<RefVisionTensor> qwen2_tensors(const RefVisionNumbers& n) { return tensors(n, false); }
std::vector<RefVisionTensor> qwen25_tensors(const RefVisionNumbers& n) { return tensors(n, true); }

GgufKV epsilon(const nlohmann::json& config) {
    const auto it = config.find("rms_norm_eps");
    const double eps = it != config.end() && it->is_number() ? it->get<double>() : 1e-6;
    return {"clip.vision.attention.layer_norm_epsilon", GgufValue::f32(static_cast<float>(eps))};
}

std::vector<GgufKV> qwen2_kvs(const RefVisionNumbers&, const nlohmann::json&, const nlohmann::json&,
                              const nlohmann::json& config) {
    return {epsilon(config)};
}

std::vector<GgufKV> qwen25_kvs(const RefVisionNumbers&, const nlohmann::json& vision,
                               const nlohmann::json&, const nlohmann::json& config) {
    std::vector<GgufKV> kvs = {{"clip.use_silu", GgufValue::boolean(true)}};
    const auto full = vision.find("fullatt_block_indexes");
    if (full != vision.end() && full->is_array() && !full->empty() &&
        (*full)[0].is_number_integer())
        kvs.push_back({"clip.vision.n_wa_pattern",
                       GgufValue::u32(static_cast<uint32_t>((*full)[0].get<int64_t>() + 1))});
    kvs.push_back(epsilon(config));
    return kvs;
}

void rename_embed_dim(nlohmann::json& vision) {
    if (!vision.contains("embed_dim")) return;
    vision["intermediate_size"] = vision["hidden_size"];
    vision["hidden_size"] = vision["embed_dim"];
}

}  // namespace qwen2vl_vision_ref

const RefVisionFamily& ref_qwen2vl_vision() {
    static const RefVisionFamily kFamily{
        "qwen2vl_merger",
        // transformers' Qwen2VLVisionConfig, and the converter's image_size 560
        {{"depth", "32"},
         {"embed_dim", "1280"},
         {"hidden_size", "3584"},
         {"mlp_ratio", "4"},
         {"num_heads", "16"},
         {"in_channels", "3"},
         {"patch_size", "14"},
         {"spatial_merge_size", "2"},
         {"temporal_patch_size", "2"},
         {"image_size", "560"}},
        qwen2vl_vision_ref::qwen2_tensors,
        qwen2vl_vision_ref::qwen2_kvs,
        qwen2vl_vision_ref::rename_embed_dim,
    };
    return kFamily;
}

const RefVisionFamily& ref_qwen25vl_vision() {
    static const RefVisionFamily kFamily{
        "qwen2.5vl_merger",
        // transformers' Qwen2_5_VLVisionConfig, and the converter's image_size 560
        {{"depth", "32"},
         {"hidden_size", "3584"},
         {"intermediate_size", "3420"},
         {"num_heads", "16"},
         {"in_channels", "3"},
         {"patch_size", "14"},
         {"spatial_merge_size", "2"},
         {"temporal_patch_size", "2"},
         {"out_hidden_size", "3584"},
         {"fullatt_block_indexes", "[7, 15, 23, 31]"},
         {"image_size", "560"}},
        qwen2vl_vision_ref::qwen25_tensors,
        qwen2vl_vision_ref::qwen25_kvs,
        qwen2vl_vision_ref::rename_embed_dim,
    };
    return kFamily;
}

}  // namespace rebox::verify_ref
