// Qwen3-VL's vision tower, patch merger and deepstack mergers, as llama.cpp v0.4.0's
// Qwen3VLVisionModel -> MmprojModel writes the mmproj file (conversion/qwen3vl.py,
// conversion/base.py; names from gguf-py's tensor_mapping.py and the class's modify_tensors):
// the Conv3D patch embedding [out, in, 2, 16, 16] cut at its temporal index into
// v.patch_embd.weight and v.patch_embd.weight.1 (the converter asserts a temporal size of 2; F32
// unless the file is F16, MmprojModel.tensor_force_quant) and its bias kept; the learned position
// table pos_embed -> v.position_embd.weight (always F32); per block the fused attn.qkv kept fused
// as attn_qkv (unlike Qwen2-VL's split), attn.proj -> attn_out, the LayerNorms norm1 / norm2 ->
// ln1 / ln2, mlp.linear_fc1 / linear_fc2 -> ffn_up / ffn_down; the merger's norm -> v.post_ln,
// linear_fc1 / linear_fc2 -> mm.0 / mm.2; deepstack_merger_list.i -> v.deepstack.L.{norm,fc1,fc2}
// with L = deepstack_visual_indexes[i], the tower layer it takes its features from.
// Keys after clip.projector_type qwen3vl_merger: clip.use_gelu, clip.vision.spatial_merge_size,
// clip.vision.attention.layer_norm_epsilon = text_config.rms_norm_eps (1e-6 without one), and
// clip.vision.is_deepstack_layers (one BOOL per tower layer). The converter reads vision_config's
// num_heads / depth as num_attention_heads / num_hidden_layers and, without an image_size,
// computes int(sqrt(num_position_embeddings) x patch_size). The same class converts Qwen3.5's
// tower (Qwen3_5(Moe)ForConditionalGeneration), which has no deepstack mergers.
#include <cmath>
#include <nlohmann/json.hpp>

#include "arch/arch_tables.hpp"
#include "vision_architecture.hpp"

namespace rebox::arch::detail {
namespace qwen3vl_vision_record {

using D = VisionDim;
using T = VisionDtype;
using S = VisionSplit;

// Qwen3VLVisionModel is registered for both (conversion/qwen3vl.py): the MoE's tower is the same.
constexpr std::string_view kArchitectures[] = {"Qwen3VLForConditionalGeneration",
                                               "Qwen3VLMoeForConditionalGeneration"};
// "model.visual." (the published layout) reaches the table as "visual." (mmproj_plan strips
// "model."), as Qwen3VLVisionModel.filter_tensors renames it.
constexpr std::string_view kPrefixes[] = {"visual."};

constexpr VisionTensorSpec row(std::string_view hf, std::string_view gguf, D rows, D cols) {
    return {hf, gguf, {rows, cols}, 2};
}
constexpr VisionTensorSpec vec(std::string_view hf, std::string_view gguf, D length) {
    return {hf, gguf, {length}, 1};
}

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
    vec("visual.patch_embed.proj.bias", "v.patch_embd.bias", D::hidden),
    // V_ENC_EMBD_POS: F32 whatever the outtype (ModelBase.prepare_tensors).
    {"visual.pos_embed.weight", "v.position_embd.weight", {D::positions, D::hidden}, 2, T::f32},
};

constexpr VisionTensorSpec kLayer[] = {
    vec("visual.blocks.{N}.norm1.weight", "v.blk.{N}.ln1.weight", D::hidden),
    vec("visual.blocks.{N}.norm1.bias", "v.blk.{N}.ln1.bias", D::hidden),
    row("visual.blocks.{N}.attn.qkv.weight", "v.blk.{N}.attn_qkv.weight", D::qkv, D::hidden),
    vec("visual.blocks.{N}.attn.qkv.bias", "v.blk.{N}.attn_qkv.bias", D::qkv),
    row("visual.blocks.{N}.attn.proj.weight", "v.blk.{N}.attn_out.weight", D::hidden, D::hidden),
    vec("visual.blocks.{N}.attn.proj.bias", "v.blk.{N}.attn_out.bias", D::hidden),
    vec("visual.blocks.{N}.norm2.weight", "v.blk.{N}.ln2.weight", D::hidden),
    vec("visual.blocks.{N}.norm2.bias", "v.blk.{N}.ln2.bias", D::hidden),
    row("visual.blocks.{N}.mlp.linear_fc1.weight", "v.blk.{N}.ffn_up.weight", D::intermediate,
        D::hidden),
    vec("visual.blocks.{N}.mlp.linear_fc1.bias", "v.blk.{N}.ffn_up.bias", D::intermediate),
    row("visual.blocks.{N}.mlp.linear_fc2.weight", "v.blk.{N}.ffn_down.weight", D::hidden,
        D::intermediate),
    vec("visual.blocks.{N}.mlp.linear_fc2.bias", "v.blk.{N}.ffn_down.bias", D::hidden),
};

// A deepstack merger normalizes after the spatial shuffle (hidden x merge^2 wide).
constexpr VisionTensorSpec kDeepstack[] = {
    vec("visual.deepstack_merger_list.{N}.norm.weight", "v.deepstack.{N}.norm.weight", D::merged),
    vec("visual.deepstack_merger_list.{N}.norm.bias", "v.deepstack.{N}.norm.bias", D::merged),
    row("visual.deepstack_merger_list.{N}.linear_fc1.weight", "v.deepstack.{N}.fc1.weight",
        D::merged, D::merged),
    vec("visual.deepstack_merger_list.{N}.linear_fc1.bias", "v.deepstack.{N}.fc1.bias", D::merged),
    row("visual.deepstack_merger_list.{N}.linear_fc2.weight", "v.deepstack.{N}.fc2.weight",
        D::text_hidden, D::merged),
    vec("visual.deepstack_merger_list.{N}.linear_fc2.bias", "v.deepstack.{N}.fc2.bias",
        D::text_hidden),
};

// The merger normalizes each patch before the shuffle (hidden wide).
constexpr VisionTensorSpec kLast[] = {
    vec("visual.merger.norm.weight", "v.post_ln.weight", D::hidden),
    vec("visual.merger.norm.bias", "v.post_ln.bias", D::hidden),
    row("visual.merger.linear_fc1.weight", "mm.0.weight", D::merged, D::merged),
    vec("visual.merger.linear_fc1.bias", "mm.0.bias", D::merged),
    row("visual.merger.linear_fc2.weight", "mm.2.weight", D::text_hidden, D::merged),
    vec("visual.merger.linear_fc2.bias", "mm.2.bias", D::text_hidden),
};

// transformers' Qwen3VLVisionConfig defaults.
constexpr ConfigDefault kDefaults[] = {
    {"depth", "27"},
    {"hidden_size", "1152"},
    {"intermediate_size", "4304"},
    {"num_heads", "16"},
    {"in_channels", "3"},
    {"patch_size", "16"},
    {"spatial_merge_size", "2"},
    {"temporal_patch_size", "2"},
    {"out_hidden_size", "3584"},
    {"num_position_embeddings", "2304"},
    {"deepstack_visual_indexes", "[8, 16, 24]"},
};

// transformers' Qwen3_5VisionConfig defaults: Qwen3-VL's without deepstack_visual_indexes (the
// Qwen3.5 tower has no deepstack mergers; the converter reads a missing list as []).
constexpr ConfigDefault kQwen35Defaults[] = {
    {"depth", "27"},
    {"hidden_size", "1152"},
    {"intermediate_size", "4304"},
    {"num_heads", "16"},
    {"in_channels", "3"},
    {"patch_size", "16"},
    {"spatial_merge_size", "2"},
    {"temporal_patch_size", "2"},
    {"out_hidden_size", "3584"},
    {"num_position_embeddings", "2304"},
};
// Qwen3VLVisionModel also converts Qwen3.5's tower (conversion/qwen3vl.py registers it for
// Qwen3_5ForConditionalGeneration and Qwen3_5MoeForConditionalGeneration).
constexpr std::string_view kQwen35Architectures[] = {"Qwen3_5ForConditionalGeneration",
                                                     "Qwen3_5MoeForConditionalGeneration"};

// Qwen3VLVisionModel.__init__: image_size from the position table when vision_config has none,
// num_heads and depth under MmprojModel's key names.
void prepare(nlohmann::json& vision) {
    if (!vision.contains("image_size") && vision["num_position_embeddings"].is_number() &&
        vision["patch_size"].is_number()) {
        const double positions = vision["num_position_embeddings"].get<double>();
        const double patch = vision["patch_size"].get<double>();
        if (positions >= 0 && positions < 1e12 && patch >= 0 && patch < 1e6)
            vision["image_size"] = static_cast<int64_t>(std::sqrt(positions) * patch);
    }
    vision["num_attention_heads"] = vision["num_heads"];
    vision["num_hidden_layers"] = vision["depth"];
}

void family_kvs(const VisionInputs& in, std::vector<GgufKV>* kvs, std::vector<Blocker>* blockers) {
    kvs->push_back({"clip.use_gelu", GgufValue::boolean(true)});
    const nlohmann::json& vision = *in.vision;
    // The merge size the tensors were checked against (a shape check refused any other value).
    const nlohmann::json& merge = vision["spatial_merge_size"];
    if (!merge.is_number_unsigned() || merge.get<uint64_t>() > (1u << 20)) return;
    kvs->push_back({"clip.vision.spatial_merge_size",
                    GgufValue::u32(static_cast<uint32_t>(merge.get<uint64_t>()))});
    double eps = 1e-6;
    if (const auto text = in.config->find("text_config");
        text != in.config->end() && text->is_object())
        if (const auto it = text->find("rms_norm_eps"); it != text->end()) {
            if (!it->is_number()) {
                blockers->push_back({"config.json: text_config.rms_norm_eps",
                                     "is " + it->dump() + ", not a number",
                                     "use the config.json that belongs to these weights"});
                return;
            }
            eps = it->get<double>();
        }
    kvs->push_back(
        {"clip.vision.attention.layer_norm_epsilon", GgufValue::f32(static_cast<float>(eps))});
    // One BOOL per tower layer (the indexes were checked against the layer count).
    std::vector<GgufScalar> deepstack(vision["num_hidden_layers"].get<size_t>(), GgufScalar{false});
    for (const nlohmann::json& index : vision["deepstack_visual_indexes"])
        deepstack[index.get<size_t>()] = GgufScalar{true};
    if (!deepstack.empty())
        kvs->push_back({"clip.vision.is_deepstack_layers",
                        GgufValue::array_of(GgufType::BOOL, std::move(deepstack))});
}

constexpr VisionArchitecture kQwen3Vision = [] {
    VisionArchitecture a;
    a.family = "qwen3vl";
    a.projector_type = "qwen3vl_merger";
    a.hf_architectures = kArchitectures;
    a.prefixes = kPrefixes;
    a.mlx_vlm_prefix = "vision_tower.";
    a.first = kFirst;
    a.layer = kLayer;
    a.last = kLast;
    a.indexed = kDeepstack;
    a.index_key = "deepstack_visual_indexes";
    a.vision_defaults = kDefaults;
    a.prepare_vision = prepare;
    a.family_kvs = family_kvs;
    return a;
}();

// The Qwen3.5 tower: the same class, tables and keys (is_deepstack_layers all false).
constexpr VisionArchitecture kQwen35Vision = [] {
    VisionArchitecture a = kQwen3Vision;
    a.family = "qwen35vl";
    a.hf_architectures = kQwen35Architectures;
    a.vision_defaults = kQwen35Defaults;
    return a;
}();

}  // namespace qwen3vl_vision_record

const VisionArchitecture& qwen3vl_vision_architecture() {
    return qwen3vl_vision_record::kQwen3Vision;
}
const VisionArchitecture& qwen35_vision_architecture() {
    return qwen3vl_vision_record::kQwen35Vision;
}

}  // namespace rebox::arch::detail
