// verify's own statement of what an mmproj file holds for a vision tower family, written again
// from llama.cpp's converter (MmprojModel and the family's subclass) and never read from the
// writer's records in src/arch/vision/: the tensors with their source names and shapes, the type
// each must have, and the clip.* keys the family adds.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "rebox/gguf_value.hpp"

namespace rebox::verify_ref {

// The vision tower's numbers as verify reads them (vision_config with the vision config class's
// defaults, text_config's hidden_size, the preprocessor files).
struct RefVisionNumbers {
    int64_t image_size = 0, patch_size = 0, hidden = 0, ffn = 0, layers = 0, heads = 0;
    int64_t channels = 0, text_hidden = 0;
    // vision_config's, where present (0 otherwise): the patch merger's spatial_merge_size, the
    // Conv3D's temporal_patch_size, Qwen2-VL's mlp_ratio.
    int64_t merge = 0, temporal = 0, mlp_ratio = 0;
    // Qwen3-VL's learned position table rows (num_position_embeddings) and the tower layers its
    // deepstack mergers take features from (deepstack_visual_indexes, in order); 0 / empty
    // otherwise.
    int64_t positions = 0;
    std::vector<int64_t> deepstack;
    // Gemma 4's: head_dim, num_key_value_heads, position_embedding_size (0 when absent).
    int64_t head_dim = 0, kv_heads = 0, axis_positions = 0;
    // Pixtral's: text_config vocab_size, and the id of the token whose embedding row the mmproj
    // holds (-1: none).
    int64_t text_vocab = 0, token_row = -1;
};

enum class RefVisionType {
    f32,           // F32 whatever the outtype (1-D, norms, biases, the embeddings)
    exact_float,   // F32, F16 or BF16: any float type holding the values exactly
    f16_or_exact,  // F16 (the converter forces it), F32 only where a value is not an fp16 value
    f32_or_f16,    // F32, or F16 holding the values exactly (the patch embedding of an F16 file)
};

struct RefVisionTensor {
    std::string gguf_name, source_name;
    std::vector<int64_t> source_shape;  // row-major, as the configs imply it
    RefVisionType type = RefVisionType::exact_float;
    bool add_one = false;  // Gemma3RMSNorm: weight + 1 as the converter adds it
    // A part of the source the converter cuts out (Qwen2-VL's q/k/v thirds, a Conv3D's temporal
    // slice): indices [slice_begin, slice_begin + slice_count) of source dim slice_axis (-1: the
    // whole source), with the GGUF tensor's row-major shape (slice_drops_axis: that dim dropped).
    int slice_axis = -1;
    int64_t slice_begin = 0, slice_count = 0;
    bool slice_drops_axis = false;
    // Written only where the source holds it (a clipped linear's bounds, Gemma 4's std_bias).
    bool optional = false;
    // A 0-d source (source_shape {}): the converter writes it as [1].
    bool scalar = false;
    // Gemma 4's Linear patch embedding [out, p x p x 3] written as the Conv2D [out, 3, p, p]:
    // GGUF value (o, c, y, x) is source value (o, (y p + x) 3 + c).
    bool pixels_to_channels = false;
    // LlamaModel.permute with this many heads (Pixtral's q / k in HF format): GGUF row r holds
    // the source row verify_ref::rope_source_row gives; 0: rows in order.
    int64_t rope_heads = 0;
};

struct RefVisionFamily {
    const char* projector_type = "";
    // transformers' vision config defaults, as "key", "json value" pairs.
    std::vector<std::pair<const char*, const char*>> defaults;
    std::vector<RefVisionTensor> (*tensors)(const RefVisionNumbers&) = nullptr;
    // The family's own KVs after clip.projector_type (vision_config with defaults, preprocessor).
    // (config: config.json as a whole, the converter's global_config.)
    std::vector<GgufKV> (*family_kvs)(const RefVisionNumbers&, const nlohmann::json& vision,
                                      const nlohmann::json& preprocessor,
                                      const nlohmann::json& config) = nullptr;
    // The converter's renames of vision_config keys, after the defaults (nullptr: none).
    void (*prepare)(nlohmann::json& vision) = nullptr;
    // The key the projector type is written under (a mixed-modality class: clip.vision.*).
    const char* projector_key = "clip.projector_type";
    // The added token whose text embedding row the mmproj holds (Pixtral's [IMG_BREAK]), or
    // nullptr; verify finds its id in the tokenizer files itself.
    const char* row_token = nullptr;
    // The converter's reading of config.json's top level into vision_config (Pixtral's
    // spatial_merge_size), after the defaults; nullptr: none.
    void (*prepare_with_config)(nlohmann::json& vision, const nlohmann::json& config) = nullptr;
};

// The families verify knows, in src/verify/arch/<family>_vision.cpp.
const RefVisionFamily& ref_gemma3_vision();
const RefVisionFamily& ref_qwen2vl_vision();
const RefVisionFamily& ref_qwen25vl_vision();
const RefVisionFamily& ref_qwen3vl_vision();
const RefVisionFamily& ref_qwen35_vision();
const RefVisionFamily& ref_gemma4_vision();
const RefVisionFamily& ref_pixtral_vision();

// The family for config.json's architectures[0] (vision_config's when it names one); nullptr when
// verify knows none.
const RefVisionFamily* find_ref_vision_family(const nlohmann::json& config);

}  // namespace rebox::verify_ref
