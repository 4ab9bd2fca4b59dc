// Gemma 4's vision tower (Gemma4VisionModel) and its projector (embed_vision, the
// Gemma4MultimodalEmbedder), as llama.cpp v0.4.0's Gemma4VisionAudioModel -> MmprojModel writes
// the mmproj file (conversion/gemma.py, conversion/base.py; names from gguf-py's
// tensor_mapping.py): the patch embedder's Linear input_proj [width, p x p x 3] reshaped to the
// Conv2D v.patch_embd.weight [width, 3, p, p] (F32 unless the file is F16, MmprojModel's patch
// rule); the position table [2, position_embedding_size, width] (one table per image axis) as
// v.position_embd.weight, always F32; per layer the RMSNorms input_layernorm -> ln1,
// post_attention_layernorm -> attn_post_norm, pre_feedforward_layernorm -> ln2,
// post_feedforward_layernorm -> ffn_post_norm, the q / k norms, and each Gemma4ClippableLinear's
// weight (".linear.weight") as attn_q / attn_k / attn_v / attn_out / ffn_gate / ffn_up / ffn_down
// with, where the checkpoint has clipped linears (use_clipped_linears), its four 0-d bounds as
// [1] F32 tensors beside it (.input_min, .input_max, .output_min, .output_max, which clip.cpp
// clamps with); std_bias / std_scale (standardize) as v.std_bias / v.std_scale; and
// embed_vision.embedding_projection as mm.input_projection.weight in the weights' type (no
// forced F16, unlike Gemma 3). The class fixes clip.vision.image_size at 224 ("unused"); the
// projector type gemma4v goes under clip.vision.projector_type (the class's mixed-modality key),
// followed by clip.vision.attention.layer_norm_epsilon (vision_config.layer_norm_eps, 1e-6 without
// one: Gemma4VisionConfig has none). The audio tower (audio_tower, embed_audio), which the
// converter writes into the same file as a second encoder, is left out with a note.
#include <nlohmann/json.hpp>

#include "vision_architecture.hpp"

namespace rebox::arch::detail {
namespace gemma4_vision_record {

using D = VisionDim;
using T = VisionDtype;
using S = VisionSplit;

constexpr std::string_view kHfArchitectures[] = {"Gemma4ForConditionalGeneration"};
// "model.vision_tower." / "model.embed_vision." reach the table without "model.".
constexpr std::string_view kPrefixes[] = {"vision_tower.", "embed_vision."};
constexpr std::string_view kLeftOut[] = {"audio_tower.", "embed_audio."};

constexpr VisionTensorSpec vec(std::string_view hf, std::string_view gguf, D length) {
    return {hf, gguf, {length}, 1};
}
constexpr VisionTensorSpec row(std::string_view hf, std::string_view gguf, D rows, D cols) {
    return {hf, gguf, {rows, cols}, 2};
}
// A clipped linear's 0-d bound, present only where the checkpoint has clipped linears.
constexpr VisionTensorSpec bound(std::string_view hf, std::string_view gguf) {
    VisionTensorSpec spec{hf, gguf, {}, 0};
    spec.optional = true;
    return spec;
}

constexpr VisionTensorSpec kFirst[] = {
    {"vision_tower.patch_embedder.input_proj.weight",
     "v.patch_embd.weight",
     {D::hidden, D::patch_pixels},
     2,
     T::f32_unless_f16,
     ValueTransform::none,
     S::hwc_to_chw},
    {"vision_tower.patch_embedder.position_embedding_table",
     "v.position_embd.weight",
     {D::two, D::axis_positions, D::hidden},
     3,
     T::f32},
};

#define G4_LINEAR(HF, GG, ROWS, COLS)                                                              \
    row("vision_tower.encoder.layers.{N}." HF ".linear.weight", "v.blk.{N}." GG ".weight", ROWS,   \
        COLS),                                                                                     \
        bound("vision_tower.encoder.layers.{N}." HF ".input_min", "v.blk.{N}." GG ".input_min"),   \
        bound("vision_tower.encoder.layers.{N}." HF ".input_max", "v.blk.{N}." GG ".input_max"),   \
        bound("vision_tower.encoder.layers.{N}." HF ".output_min", "v.blk.{N}." GG ".output_min"), \
        bound("vision_tower.encoder.layers.{N}." HF ".output_max", "v.blk.{N}." GG ".output_max")

constexpr VisionTensorSpec kLayer[] = {
    vec("vision_tower.encoder.layers.{N}.input_layernorm.weight", "v.blk.{N}.ln1.weight",
        D::hidden),
    G4_LINEAR("self_attn.q_proj", "attn_q", D::q_width, D::hidden),
    G4_LINEAR("self_attn.k_proj", "attn_k", D::kv_width, D::hidden),
    G4_LINEAR("self_attn.v_proj", "attn_v", D::kv_width, D::hidden),
    G4_LINEAR("self_attn.o_proj", "attn_out", D::hidden, D::q_width),
    vec("vision_tower.encoder.layers.{N}.self_attn.q_norm.weight", "v.blk.{N}.attn_q_norm.weight",
        D::head_dim),
    vec("vision_tower.encoder.layers.{N}.self_attn.k_norm.weight", "v.blk.{N}.attn_k_norm.weight",
        D::head_dim),
    vec("vision_tower.encoder.layers.{N}.post_attention_layernorm.weight",
        "v.blk.{N}.attn_post_norm.weight", D::hidden),
    vec("vision_tower.encoder.layers.{N}.pre_feedforward_layernorm.weight", "v.blk.{N}.ln2.weight",
        D::hidden),
    G4_LINEAR("mlp.gate_proj", "ffn_gate", D::intermediate, D::hidden),
    G4_LINEAR("mlp.up_proj", "ffn_up", D::intermediate, D::hidden),
    G4_LINEAR("mlp.down_proj", "ffn_down", D::hidden, D::intermediate),
    vec("vision_tower.encoder.layers.{N}.post_feedforward_layernorm.weight",
        "v.blk.{N}.ffn_post_norm.weight", D::hidden),
};
#undef G4_LINEAR

constexpr VisionTensorSpec standardize(std::string_view hf, std::string_view gguf) {
    VisionTensorSpec spec = vec(hf, gguf, D::hidden);
    spec.optional = true;
    return spec;
}

constexpr VisionTensorSpec kLast[] = {
    standardize("vision_tower.std_bias", "v.std_bias"),
    standardize("vision_tower.std_scale", "v.std_scale"),
    row("embed_vision.embedding_projection.weight", "mm.input_projection.weight", D::text_hidden,
        D::hidden),
};

// transformers' Gemma4VisionConfig defaults.
constexpr ConfigDefault kDefaults[] = {
    {"hidden_size", "768"},        {"intermediate_size", "3072"},
    {"num_hidden_layers", "16"},   {"num_attention_heads", "12"},
    {"num_key_value_heads", "12"}, {"head_dim", "64"},
    {"patch_size", "16"},          {"position_embedding_size", "10240"},
    {"pooling_kernel_size", "3"},
};

// Gemma4VisionAudioModel.__init__ sets image_size to 224 ("unused, but set to avoid error"); the
// patch embedder takes RGB patches (Gemma4VisionPatchEmbedder's 3 x patch_size^2 inputs).
void prepare(nlohmann::json& vision) {
    vision["image_size"] = 224;
    vision["num_channels"] = 3;
}

void family_kvs(const VisionInputs& in, std::vector<GgufKV>* kvs, std::vector<Blocker>* blockers) {
    double eps = 1e-6;
    if (const auto it = in.vision->find("layer_norm_eps"); it != in.vision->end()) {
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
}

constexpr VisionArchitecture kGemma4Vision = [] {
    VisionArchitecture a;
    a.family = "gemma4";
    a.projector_type = "gemma4v";
    a.projector_key = "clip.vision.projector_type";
    a.left_out = kLeftOut;
    a.left_out_note =
        "audio tower tensor(s) left out of the mmproj: llama.cpp's converter writes them into "
        "the same file as a gemma4a audio encoder; rebox writes the vision encoder only (images "
        "work, audio input does not)";
    a.hf_architectures = kHfArchitectures;
    a.prefixes = kPrefixes;
    a.first = kFirst;
    a.layer = kLayer;
    a.last = kLast;
    a.vision_defaults = kDefaults;
    a.prepare_vision = prepare;
    a.family_kvs = family_kvs;
    return a;
}();

}  // namespace gemma4_vision_record

const VisionArchitecture& gemma4_vision_architecture() {
    return gemma4_vision_record::kGemma4Vision;
}

}  // namespace rebox::arch::detail
