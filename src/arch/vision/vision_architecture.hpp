// What the mmproj writer knows about one vision tower family (llama.cpp's MmprojModel subclass for
// it): the config.json architectures it claims, its tensor table (HF name -> GGUF name, the shape
// the config implies, the dtype rule the converter applies), transformers' defaults for the
// vision_config keys a checkpoint may leave out, and the family's own clip.* keys. One file per
// family under src/arch/vision/, listed once in vision_registry.cpp; nothing outside names a
// family.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch/architecture.hpp"
#include "rebox/error.hpp"
#include "rebox/gguf_value.hpp"

namespace rebox::arch {

// A size read from the vision inputs, for a tensor's expected shape.
enum class VisionDim : uint8_t {
    one,
    hidden,          // vision_config hidden_size
    intermediate,    // vision_config intermediate_size
    text_hidden,     // text_config hidden_size (clip.vision.projection_dim)
    channels,        // vision_config num_channels
    patch,           // vision_config patch_size
    patches,         // (image_size / patch_size)^2: the position table's rows
    qkv,             // 3 x hidden: a fused q/k/v projection's rows
    merged,          // hidden x spatial_merge_size^2: a patch merger's input width
    temporal,        // vision_config temporal_patch_size: a Conv3D patch embedding's depth
    mlp_width,       // hidden x mlp_ratio: the block MLP's width where vision_config gives a ratio
    positions,       // vision_config num_position_embeddings: a learned position table's rows
    two,             // 2: one table per image axis (Gemma 4's position table)
    axis_positions,  // vision_config position_embedding_size: rows per axis table
    patch_pixels,    // 3 x patch_size^2: a patch's pixels as a Linear's inputs
    q_width,         // num_attention_heads x head_dim
    kv_width,        // num_key_value_heads x head_dim
    head_dim,        // vision_config head_dim
    text_vocab,      // text_config vocab_size: the text embedding's rows
};

// One source tensor written as several GGUF tensors (the converter's modify_tensors split): which
// part this row takes. Whole rows move, so every float type carries them exactly.
enum class VisionSplit : uint8_t {
    none,
    third_0,  // rows [0, n/3) of a fused q/k/v weight or bias: q
    third_1,  // rows [n/3, 2n/3): k
    third_2,  // rows [2n/3, n): v
    // A Conv3D [out, in, 2, kh, kw] cut at its temporal index 0 / 1 into two Conv2D
    // [out, in, kh, kw] (the converter asserts a temporal size of 2).
    temporal_0,
    temporal_1,
    // A Linear patch embedding [out, p x p x 3] (each row a patch's pixels by row, column,
    // channel) written as the Conv2D [out, 3, p, p] clip.cpp convolves with (Gemma 4's
    // input_proj: the converter's reshape(out, p, p, 3).permute(0, 3, 1, 2)). Every value moves on
    // its own, so every float type carries it exactly.
    hwc_to_chw,
    // llama's LlamaModel.permute over vision_config num_attention_heads (q and k alike: the
    // converter passes n_head for both), whole rows: Pixtral's q_proj / k_proj in HF format.
    rope_pairs,
    // One row of the text model's embedding [vocab, width] as a 1-D [width] tensor: the row of the
    // added token VisionArchitecture::row_token (Pixtral's [IMG_BREAK], data_torch[id]).
    token_row,
};

// How the converter picks a tensor's GGUF type (MmprojModel.tensor_force_quant and the family's
// override, then ModelBase.prepare_tensors' rules).
enum class VisionDtype : uint8_t {
    weight,          // the outtype rules of a text weight (1-D, norms, biases: F32)
    f32,             // always F32 (position table, a family's forced embeddings)
    f16_when_exact,  // the converter forces F16: F16 where every value is exact, else exact F32
    // MmprojModel's patch embedding rule: F16 when the file is F16 (here: the weight rule gives
    // F16, an F16 source), else F32.
    f32_unless_f16,
};

struct VisionTensorSpec {
    std::string_view hf;      // the HF name; "{N}" stands for the layer index in layer rows
    std::string_view gguf;    // the GGUF name; "{N}" likewise
    VisionDim shape[5] = {};  // the source (row-major) shape; unused trailing dims: one
    uint8_t dims = 0;
    VisionDtype dtype = VisionDtype::weight;
    ValueTransform value = ValueTransform::none;
    VisionSplit split = VisionSplit::none;  // the source shape is the whole one
    // Written when the checkpoint holds it (the converter writes what it finds, clip.cpp loads it
    // as optional); not required otherwise.
    bool optional = false;
};
// dims 0: a scalar (a 0-d buffer, or [1]); the converter unsqueezes it to the GGUF [1].

// The family's inputs as the converter sees them: vision_config (its defaults filled in),
// preprocessor_config.json merged with processor_config.json, the text model's width.
struct VisionInputs {
    const nlohmann::json* vision = nullptr;
    const nlohmann::json* preprocessor = nullptr;
    const nlohmann::json* config = nullptr;  // config.json as the converter's global_config
    uint32_t text_hidden = 0;
    uint32_t image_size = 0, patch_size = 0;
};

struct VisionArchitecture {
    std::string_view family;          // "gemma3": docs and notes
    std::string_view projector_type;  // clip.projector_type
    // The key the projector type is written under: clip.projector_type, or
    // clip.vision.projector_type (the converter's mixed-modality classes, e.g. Gemma 4's).
    std::string_view projector_key = "clip.projector_type";
    // Source names under these prefixes ("model." dropped) belong to another encoder rebox leaves
    // out of the mmproj (Gemma 4's audio tower); a note says how many and why.
    std::span<const std::string_view> left_out;
    std::string_view left_out_note;
    // config.json architectures[0] (vision_config.architectures[0] when present) it converts.
    std::span<const std::string_view> hf_architectures;
    // Source names under these prefixes belong to the mmproj ("model." before them is dropped).
    std::span<const std::string_view> prefixes;
    // mlx-vlm's name for prefixes[0] (its sanitize renames "visual." to "vision_tower."; empty:
    // none). Such a checkpoint stores a Conv3D patch embedding channel-last, [out, T, kh, kw, in]
    // (sanitize's transpose(0, 2, 3, 4, 1)), which the plan moves back value by value.
    std::string_view mlx_vlm_prefix;
    // Source names containing one of these are skipped, as the converter's filter_tensors does.
    std::span<const std::string_view> skipped;
    std::span<const VisionTensorSpec> first, layer, last;
    // Rows of a list of modules attached to some layers (Qwen3-VL's deepstack mergers): "{N}" in
    // the HF name is the list position i, in the GGUF name the layer vision_config[index_key][i]
    // names (each index a layer of the tower). Written after the layers, in the list's order.
    std::span<const VisionTensorSpec> indexed;
    std::string_view index_key;
    // transformers' defaults (the vision config class) for keys vision_config may leave out.
    std::span<const ConfigDefault> vision_defaults;
    // The converter's renames of vision_config keys (after the defaults), before anything reads it.
    void (*prepare_vision)(nlohmann::json& vision) = nullptr;
    // The converter's renames that read config.json as a whole (after prepare_vision): Pixtral's
    // spatial_merge_size from the top level.
    void (*prepare_with_config)(nlohmann::json& vision, const nlohmann::json& config) = nullptr;
    // The added token (tokenizer_config.json added_tokens_decoder, else tokenizer.json
    // added_tokens) whose embedding row a VisionSplit::token_row row takes; empty: none.
    std::string_view row_token;
    // The family's own KVs, appended after MmprojModel's common ones; a value it cannot write is a
    // Blocker naming the file and field.
    void (*family_kvs)(const VisionInputs& in, std::vector<GgufKV>* kvs,
                       std::vector<Blocker>* blockers) = nullptr;
};

// The family that converts this config.json (nullptr: none, or no vision_config).
const VisionArchitecture* find_vision_architecture(const nlohmann::json& config);

namespace detail {
const VisionArchitecture& gemma3_vision_architecture();
const VisionArchitecture& qwen2vl_vision_architecture();
const VisionArchitecture& qwen25vl_vision_architecture();
const VisionArchitecture& qwen3vl_vision_architecture();
const VisionArchitecture& qwen35_vision_architecture();
const VisionArchitecture& gemma4_vision_architecture();
const VisionArchitecture& pixtral_vision_architecture();
}  // namespace detail

}  // namespace rebox::arch
