// Qwen2-VL's and Qwen2.5-VL's vision tower and patch merger, as llama.cpp v0.4.0's
// Qwen2VLVisionModel -> MmprojModel writes the mmproj file (conversion/qwenvl.py,
// conversion/base.py; names from gguf-py's tensor_mapping.py): the fused attn.qkv weight and bias
// split into attn_q / attn_k / attn_v (rows [0, n/3), [n/3, 2n/3), [2n/3, n)); the Conv3D patch
// embedding [out, in, 2, 14, 14] cut at its temporal index into v.patch_embd.weight and
// v.patch_embd.weight.1 (the converter asserts a temporal size of 2; F32 unless the file is F16,
// MmprojModel.tensor_force_quant); the merger's ln_q -> v.post_ln, mlp.0 / mlp.2 -> mm.0 / mm.2.
// Keys: clip.projector_type qwen2vl_merger (model_type qwen2_vl) or qwen2.5vl_merger (qwen2_5_vl,
// then clip.use_silu and clip.vision.n_wa_pattern = fullatt_block_indexes[0] + 1, every gap equal
// to it), then clip.vision.attention.layer_norm_epsilon = config.json's top-level rms_norm_eps
// (1e-6 without one). Qwen2-VL's vision_config names its width embed_dim: the converter reads
// embed_dim as hidden_size and the old hidden_size (the merger's output) as intermediate_size.
#include <nlohmann/json.hpp>

#include "arch/arch_tables.hpp"
#include "vision_architecture.hpp"

namespace rebox::arch::detail {
namespace qwen2vl_vision_record {

using D = VisionDim;
using T = VisionDtype;
using S = VisionSplit;

constexpr std::string_view kQwen2Architectures[] = {"Qwen2VLForConditionalGeneration"};
constexpr std::string_view kQwen25Architectures[] = {"Qwen2_5_VLForConditionalGeneration"};
// "model.visual." (transformers >= 4.52) reaches the table as "visual." (mmproj_plan strips
// "model.").
constexpr std::string_view kPrefixes[] = {"visual."};

constexpr VisionTensorSpec kFirst[] = {
    {"visual.patch_embed.proj.weight",
     "v.patch_embd.weight",
     {D::hidden, D::channels, D::temporal, D::patch, D::patch},
     5,
     T::f32_unless_f16,
     ValueTransform::none,
     S::temporal_0},
    {"visual.patch_embed.proj.weight",
     "v.patch_embd.weight.1",
     {D::hidden, D::channels, D::temporal, D::patch, D::patch},
     5,
     T::f32_unless_f16,
     ValueTransform::none,
     S::temporal_1},
};

// A row of the tables below: source name, GGUF name, the source shape, the split part.
constexpr VisionTensorSpec row(std::string_view hf, std::string_view gguf, D rows, D cols,
                               S split = S::none) {
    return {hf, gguf, {rows, cols}, 2, T::weight, ValueTransform::none, split};
}
constexpr VisionTensorSpec vec(std::string_view hf, std::string_view gguf, D length,
                               S split = S::none) {
    return {hf, gguf, {length}, 1, T::weight, ValueTransform::none, split};
}

// The attention rows both towers share: the fused qkv's three parts, then proj.
constexpr std::array kAttention{
    row("visual.blocks.{N}.attn.qkv.weight", "v.blk.{N}.attn_q.weight", D::qkv, D::hidden,
        S::third_0),
    row("visual.blocks.{N}.attn.qkv.weight", "v.blk.{N}.attn_k.weight", D::qkv, D::hidden,
        S::third_1),
    row("visual.blocks.{N}.attn.qkv.weight", "v.blk.{N}.attn_v.weight", D::qkv, D::hidden,
        S::third_2),
    vec("visual.blocks.{N}.attn.qkv.bias", "v.blk.{N}.attn_q.bias", D::qkv, S::third_0),
    vec("visual.blocks.{N}.attn.qkv.bias", "v.blk.{N}.attn_k.bias", D::qkv, S::third_1),
    vec("visual.blocks.{N}.attn.qkv.bias", "v.blk.{N}.attn_v.bias", D::qkv, S::third_2),
    row("visual.blocks.{N}.attn.proj.weight", "v.blk.{N}.attn_out.weight", D::hidden, D::hidden),
    vec("visual.blocks.{N}.attn.proj.bias", "v.blk.{N}.attn_out.bias", D::hidden),
};

// Qwen2-VL: LayerNorms (weight and bias), the fc1 / fc2 MLP embed_dim x mlp_ratio wide.
constexpr auto kQwen2Layer = join(
    std::array{vec("visual.blocks.{N}.norm1.weight", "v.blk.{N}.ln1.weight", D::hidden),
               vec("visual.blocks.{N}.norm1.bias", "v.blk.{N}.ln1.bias", D::hidden)},
    kAttention,
    std::array{
        vec("visual.blocks.{N}.norm2.weight", "v.blk.{N}.ln2.weight", D::hidden),
        vec("visual.blocks.{N}.norm2.bias", "v.blk.{N}.ln2.bias", D::hidden),
        row("visual.blocks.{N}.mlp.fc1.weight", "v.blk.{N}.ffn_up.weight", D::mlp_width, D::hidden),
        vec("visual.blocks.{N}.mlp.fc1.bias", "v.blk.{N}.ffn_up.bias", D::mlp_width),
        row("visual.blocks.{N}.mlp.fc2.weight", "v.blk.{N}.ffn_down.weight", D::hidden,
            D::mlp_width),
        vec("visual.blocks.{N}.mlp.fc2.bias", "v.blk.{N}.ffn_down.bias", D::hidden)});

// Qwen2.5-VL: RMSNorms (weight only), the gated MLP intermediate_size wide, with biases.
constexpr auto kQwen25Layer = join(
    std::array{vec("visual.blocks.{N}.norm1.weight", "v.blk.{N}.ln1.weight", D::hidden)},
    kAttention,
    std::array{
        vec("visual.blocks.{N}.norm2.weight", "v.blk.{N}.ln2.weight", D::hidden),
        row("visual.blocks.{N}.mlp.gate_proj.weight", "v.blk.{N}.ffn_gate.weight", D::intermediate,
            D::hidden),
        vec("visual.blocks.{N}.mlp.gate_proj.bias", "v.blk.{N}.ffn_gate.bias", D::intermediate),
        row("visual.blocks.{N}.mlp.up_proj.weight", "v.blk.{N}.ffn_up.weight", D::intermediate,
            D::hidden),
        vec("visual.blocks.{N}.mlp.up_proj.bias", "v.blk.{N}.ffn_up.bias", D::intermediate),
        row("visual.blocks.{N}.mlp.down_proj.weight", "v.blk.{N}.ffn_down.weight", D::hidden,
            D::intermediate),
        vec("visual.blocks.{N}.mlp.down_proj.bias", "v.blk.{N}.ffn_down.bias", D::hidden)});

constexpr VisionTensorSpec kQwen2Last[] = {
    {"visual.merger.ln_q.weight", "v.post_ln.weight", {D::hidden}, 1},
    {"visual.merger.ln_q.bias", "v.post_ln.bias", {D::hidden}, 1},
    {"visual.merger.mlp.0.weight", "mm.0.weight", {D::merged, D::merged}, 2},
    {"visual.merger.mlp.0.bias", "mm.0.bias", {D::merged}, 1},
    {"visual.merger.mlp.2.weight", "mm.2.weight", {D::text_hidden, D::merged}, 2},
    {"visual.merger.mlp.2.bias", "mm.2.bias", {D::text_hidden}, 1},
};
constexpr VisionTensorSpec kQwen25Last[] = {
    {"visual.merger.ln_q.weight", "v.post_ln.weight", {D::hidden}, 1},
    {"visual.merger.mlp.0.weight", "mm.0.weight", {D::merged, D::merged}, 2},
    {"visual.merger.mlp.0.bias", "mm.0.bias", {D::merged}, 1},
    {"visual.merger.mlp.2.weight", "mm.2.weight", {D::text_hidden, D::merged}, 2},
    {"visual.merger.mlp.2.bias", "mm.2.bias", {D::text_hidden}, 1},
};

// transformers' Qwen2VLVisionConfig defaults, and the converter's image_size default (560).
constexpr ConfigDefault kQwen2Defaults[] = {
    {"depth", "32"},       {"embed_dim", "1280"},       {"hidden_size", "3584"},
    {"mlp_ratio", "4"},    {"num_heads", "16"},         {"in_channels", "3"},
    {"patch_size", "14"},  {"spatial_merge_size", "2"}, {"temporal_patch_size", "2"},
    {"image_size", "560"},
};
// transformers' Qwen2_5_VLVisionConfig defaults, and the converter's image_size default.
constexpr ConfigDefault kQwen25Defaults[] = {
    {"depth", "32"},
    {"hidden_size", "3584"},
    {"intermediate_size", "3420"},
    {"num_heads", "16"},
    {"in_channels", "3"},
    {"patch_size", "14"},
    {"spatial_merge_size", "2"},
    {"temporal_patch_size", "2"},
    {"out_hidden_size", "3584"},
    {"fullatt_block_indexes", "[7, 15, 23, 31]"},
    {"image_size", "560"},
};

// Qwen2VLVisionModel.__init__: a vision_config with embed_dim (Qwen2-VL) is read with
// intermediate_size = its hidden_size and hidden_size = embed_dim.
void rename_embed_dim(nlohmann::json& vision) {
    if (!vision.contains("embed_dim")) return;
    vision["intermediate_size"] = vision["hidden_size"];
    vision["hidden_size"] = vision["embed_dim"];
}

// clip.cpp's qwen2vl / qwen2.5vl graphs merge 2 x 2 patches unless the file says otherwise, and
// the converter writes no spatial_merge_size: another size would load and compute wrongly.
bool merge_size_checked(const VisionInputs& in, std::vector<Blocker>* blockers) {
    const nlohmann::json& merge = (*in.vision)["spatial_merge_size"];
    if (merge.is_number_integer() && merge.get<int64_t>() == 2) return true;
    blockers->push_back({"config.json: vision_config.spatial_merge_size",
                         "is " + merge.dump() +
                             "; llama.cpp's converter writes no merge size and clip.cpp's "
                             "Qwen2-VL graph merges 2 x 2 patches",
                         "use the config.json that belongs to these weights"});
    return false;
}

// The top-level rms_norm_eps (global_config), 1e-6 without one.
void layer_norm_epsilon(const VisionInputs& in, std::vector<GgufKV>* kvs,
                        std::vector<Blocker>* blockers) {
    double eps = 1e-6;
    if (const auto it = in.config->find("rms_norm_eps"); it != in.config->end()) {
        if (!it->is_number()) {
            blockers->push_back({"config.json: rms_norm_eps", "is " + it->dump() + ", not a number",
                                 "use the config.json that belongs to these weights"});
            return;
        }
        eps = it->get<double>();
    }
    kvs->push_back(
        {"clip.vision.attention.layer_norm_epsilon", GgufValue::f32(static_cast<float>(eps))});
}

void qwen2_kvs(const VisionInputs& in, std::vector<GgufKV>* kvs, std::vector<Blocker>* blockers) {
    if (!merge_size_checked(in, blockers)) return;
    layer_norm_epsilon(in, kvs, blockers);
}

// Qwen2.5-VL: clip.use_silu, then n_wa_pattern from fullatt_block_indexes.
void qwen25_kvs(const VisionInputs& in, std::vector<GgufKV>* kvs, std::vector<Blocker>* blockers) {
    if (!merge_size_checked(in, blockers)) return;
    kvs->push_back({"clip.use_silu", GgufValue::boolean(true)});
    const nlohmann::json& full = (*in.vision)["fullatt_block_indexes"];
    const auto refuse = [&](const std::string& why) {
        blockers->push_back({"config.json: vision_config.fullatt_block_indexes", why,
                             "use the config.json that belongs to these weights"});
    };
    if (!full.is_array() || full.empty()) return refuse("is " + full.dump() + ", not a list");
    for (const nlohmann::json& index : full)
        if (!index.is_number_integer() || index.get<int64_t>() < 0 ||
            index.get<int64_t>() >= int64_t{1} << 20)
            return refuse("holds " + index.dump() + ", not a block index");
    const int64_t pattern = full[0].get<int64_t>() + 1;
    for (size_t i = 1; i < full.size(); ++i)
        if (full[i].get<int64_t>() - full[i - 1].get<int64_t>() != pattern)
            return refuse("is " + full.dump() + ": the full-attention blocks are not every " +
                          std::to_string(pattern) +
                          "th (llama.cpp's converter raises \"Invalid fullatt_block_indexes\"; "
                          "clip.cpp's n_wa_pattern holds one period)");
    kvs->push_back({"clip.vision.n_wa_pattern", GgufValue::u32(static_cast<uint32_t>(pattern))});
    layer_norm_epsilon(in, kvs, blockers);
}

constexpr VisionArchitecture kQwen2Vision = [] {
    VisionArchitecture a;
    a.family = "qwen2vl";
    a.projector_type = "qwen2vl_merger";
    a.hf_architectures = kQwen2Architectures;
    a.prefixes = kPrefixes;
    a.mlx_vlm_prefix = "vision_tower.";
    a.first = kFirst;
    a.layer = kQwen2Layer;
    a.last = kQwen2Last;
    a.vision_defaults = kQwen2Defaults;
    a.prepare_vision = rename_embed_dim;
    a.family_kvs = qwen2_kvs;
    return a;
}();

constexpr VisionArchitecture kQwen25Vision = [] {
    VisionArchitecture a;
    a.family = "qwen2.5vl";
    a.projector_type = "qwen2.5vl_merger";
    a.hf_architectures = kQwen25Architectures;
    a.prefixes = kPrefixes;
    a.mlx_vlm_prefix = "vision_tower.";
    a.first = kFirst;
    a.layer = kQwen25Layer;
    a.last = kQwen25Last;
    a.vision_defaults = kQwen25Defaults;
    a.prepare_vision = rename_embed_dim;
    a.family_kvs = qwen25_kvs;
    return a;
}();

}  // namespace qwen2vl_vision_record

const VisionArchitecture& qwen2vl_vision_architecture() {
    return qwen2vl_vision_record::kQwen2Vision;
}
const VisionArchitecture& qwen25vl_vision_architecture() {
    return qwen2vl_vision_record::kQwen25Vision;
}

}  // namespace rebox::arch::detail
