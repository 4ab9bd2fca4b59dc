// gemma3's vision tower (SigLIP) and projector, as llama.cpp v0.4.0's Gemma3VisionModel ->
// MmprojModel writes the mmproj file (conversion/gemma.py, conversion/base.py; names from gguf-py's
// tensor_mapping.py): projector type "gemma3"; the patch and position embeddings F32 (its override
// for ".embeddings."), mm.input_projection forced F16 (kept exact: F32 where F16 would round),
// mm.soft_emb_norm written as weight + 1 (Gemma3RMSNorm); clip.vision.attention.layer_norm_epsilon,
// clip.use_gelu, and clip.vision.projector.scale_factor only when it is not 4.
#include <cmath>
#include <nlohmann/json.hpp>

#include "vision_architecture.hpp"

namespace rebox::arch::detail {
namespace gemma3_vision_record {

using D = VisionDim;
using T = VisionDtype;

constexpr std::string_view kHfArchitectures[] = {"Gemma3ForConditionalGeneration"};
constexpr std::string_view kPrefixes[] = {"vision_tower.", "multi_modal_projector."};
constexpr std::string_view kSkipped[] = {"vision_model.head."};  // tinygemma3's redundant head

constexpr VisionTensorSpec kFirst[] = {
    {"vision_tower.vision_model.embeddings.patch_embedding.weight",
     "v.patch_embd.weight",
     {D::hidden, D::channels, D::patch, D::patch},
     4,
     T::f32},
    {"vision_tower.vision_model.embeddings.patch_embedding.bias",
     "v.patch_embd.bias",
     {D::hidden},
     1,
     T::f32},
    {"vision_tower.vision_model.embeddings.position_embedding.weight",
     "v.position_embd.weight",
     {D::patches, D::hidden},
     2,
     T::f32},
};

constexpr VisionTensorSpec kLayer[] = {
    {"vision_tower.vision_model.encoder.layers.{N}.layer_norm1.weight",
     "v.blk.{N}.ln1.weight",
     {D::hidden},
     1},
    {"vision_tower.vision_model.encoder.layers.{N}.layer_norm1.bias",
     "v.blk.{N}.ln1.bias",
     {D::hidden},
     1},
    {"vision_tower.vision_model.encoder.layers.{N}.self_attn.q_proj.weight",
     "v.blk.{N}.attn_q.weight",
     {D::hidden, D::hidden},
     2},
    {"vision_tower.vision_model.encoder.layers.{N}.self_attn.q_proj.bias",
     "v.blk.{N}.attn_q.bias",
     {D::hidden},
     1},
    {"vision_tower.vision_model.encoder.layers.{N}.self_attn.k_proj.weight",
     "v.blk.{N}.attn_k.weight",
     {D::hidden, D::hidden},
     2},
    {"vision_tower.vision_model.encoder.layers.{N}.self_attn.k_proj.bias",
     "v.blk.{N}.attn_k.bias",
     {D::hidden},
     1},
    {"vision_tower.vision_model.encoder.layers.{N}.self_attn.v_proj.weight",
     "v.blk.{N}.attn_v.weight",
     {D::hidden, D::hidden},
     2},
    {"vision_tower.vision_model.encoder.layers.{N}.self_attn.v_proj.bias",
     "v.blk.{N}.attn_v.bias",
     {D::hidden},
     1},
    {"vision_tower.vision_model.encoder.layers.{N}.self_attn.out_proj.weight",
     "v.blk.{N}.attn_out.weight",
     {D::hidden, D::hidden},
     2},
    {"vision_tower.vision_model.encoder.layers.{N}.self_attn.out_proj.bias",
     "v.blk.{N}.attn_out.bias",
     {D::hidden},
     1},
    {"vision_tower.vision_model.encoder.layers.{N}.layer_norm2.weight",
     "v.blk.{N}.ln2.weight",
     {D::hidden},
     1},
    {"vision_tower.vision_model.encoder.layers.{N}.layer_norm2.bias",
     "v.blk.{N}.ln2.bias",
     {D::hidden},
     1},
    // SigLIP's fc1 / fc2 are ffn_up / ffn_down (tensor_mapping.py).
    {"vision_tower.vision_model.encoder.layers.{N}.mlp.fc1.weight",
     "v.blk.{N}.ffn_up.weight",
     {D::intermediate, D::hidden},
     2},
    {"vision_tower.vision_model.encoder.layers.{N}.mlp.fc1.bias",
     "v.blk.{N}.ffn_up.bias",
     {D::intermediate},
     1},
    {"vision_tower.vision_model.encoder.layers.{N}.mlp.fc2.weight",
     "v.blk.{N}.ffn_down.weight",
     {D::hidden, D::intermediate},
     2},
    {"vision_tower.vision_model.encoder.layers.{N}.mlp.fc2.bias",
     "v.blk.{N}.ffn_down.bias",
     {D::hidden},
     1},
};

constexpr VisionTensorSpec kLast[] = {
    {"vision_tower.vision_model.post_layernorm.weight", "v.post_ln.weight", {D::hidden}, 1},
    {"vision_tower.vision_model.post_layernorm.bias", "v.post_ln.bias", {D::hidden}, 1},
    // A parameter without ".weight" ("_weight" -> ".weight" in filter_tensors), used as x @ W: the
    // vision width is its first dim, not transposed.
    {"multi_modal_projector.mm_input_projection_weight",
     "mm.input_projection.weight",
     {D::hidden, D::text_hidden},
     2,
     T::f16_when_exact},
    {"multi_modal_projector.mm_soft_emb_norm.weight",
     "mm.soft_emb_norm.weight",
     {D::hidden},
     1,
     T::weight,
     ValueTransform::add_one},
};

// transformers' SiglipVisionConfig defaults (Gemma3Config builds its vision_config from them).
constexpr ConfigDefault kDefaults[] = {
    {"hidden_size", "768"},        {"intermediate_size", "3072"}, {"num_hidden_layers", "12"},
    {"num_attention_heads", "12"}, {"num_channels", "3"},         {"image_size", "224"},
    {"patch_size", "16"},          {"layer_norm_eps", "1e-06"},
};

// Gemma3VisionModel.set_gguf_parameters after MmprojModel's keys and clip.projector_type.
void gemma3_kvs(const VisionInputs& in, std::vector<GgufKV>* kvs, std::vector<Blocker>* blockers) {
    const nlohmann::json& eps = (*in.vision)["layer_norm_eps"];
    if (!eps.is_number()) {
        blockers->push_back({"config.json: vision_config.layer_norm_eps", "is not a number",
                             "use the config.json that belongs to these weights"});
        return;
    }
    kvs->push_back({"clip.vision.attention.layer_norm_epsilon",
                    GgufValue::f32(static_cast<float>(eps.get<double>()))});
    kvs->push_back({"clip.use_gelu", GgufValue::boolean(true)});
    // The projector pools (image_size / patch_size) patches per side down to
    // sqrt(image_seq_length); the converter writes the factor only when it is not clip.cpp's
    // default 4 (tinygemma3).
    int64_t seq = 256;
    if (in.preprocessor->contains("image_seq_length")) {
        const nlohmann::json& value = (*in.preprocessor)["image_seq_length"];
        if (!value.is_number_integer() || value.get<int64_t>() <= 0) {
            blockers->push_back({"preprocessor_config.json: image_seq_length",
                                 "is not a positive integer",
                                 "use the preprocessor_config.json that belongs to these weights"});
            return;
        }
        seq = value.get<int64_t>();
    }
    const auto per_side = static_cast<int64_t>(std::sqrt(static_cast<double>(seq)));
    const int64_t factor = (in.image_size / in.patch_size) / per_side;
    if (factor > 0 && factor != 4)
        kvs->push_back(
            {"clip.vision.projector.scale_factor", GgufValue::u32(static_cast<uint32_t>(factor))});
}

constexpr VisionArchitecture kGemma3Vision = [] {
    VisionArchitecture a;
    a.family = "gemma3";
    a.projector_type = "gemma3";
    a.hf_architectures = kHfArchitectures;
    a.prefixes = kPrefixes;
    a.skipped = kSkipped;
    a.first = kFirst;
    a.layer = kLayer;
    a.last = kLast;
    a.vision_defaults = kDefaults;
    a.family_kvs = gemma3_kvs;
    return a;
}();

}  // namespace gemma3_vision_record

const VisionArchitecture& gemma3_vision_architecture() {
    return gemma3_vision_record::kGemma3Vision;
}

}  // namespace rebox::arch::detail
