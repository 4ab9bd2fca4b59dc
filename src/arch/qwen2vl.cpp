// qwen2vl (Qwen2-VL, Qwen2.5-VL): the text model of Qwen2VLForConditionalGeneration and
// Qwen2_5_VLForConditionalGeneration as llama.cpp's converter writes it (conversion/qwenvl.py,
// Qwen2VLModel, chosen by architectures[0]) for its qwen2vl graph (src/models/qwen2vl.cpp): qwen2's
// tensors (q/k/v biases, an optional output bias, NEOX rows, no permutation) and TextModel's KVs
// with rope.dimension_sections, the M-RoPE mrope_section of the rope parameters padded to 4
// (the converter reads rope_parameters, else rope_scaling). Both checkpoint layouts: the original
// model.* + visual.* and transformers >= 4.52's model.language_model.* + model.visual.*; the vision
// tower is the mmproj's (src/arch/vision/qwen2vl_vision.cpp), left out here.
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {

const char* mrope_block_name(const nlohmann::json& root) {
    return root.contains("rope_parameters") && !root["rope_parameters"].is_null()
               ? "rope_parameters"
               : "rope_scaling";
}

// TextModel: rope.dimension_sections from the rope parameters' mrope_section, padded to 4.
void read_mrope_sections(const nlohmann::json& root, ModelConfig& config) {
    config.rope_sections.clear();
    const char* name = mrope_block_name(root);
    const auto block = root.find(name);
    if (block == root.end() || !block->is_object() || !block->contains("mrope_section")) return;
    const std::string field = std::string(name) + ".mrope_section";
    const nlohmann::json& sections = (*block)["mrope_section"];
    if (!sections.is_array() || sections.size() > 4)
        throw_input_error("config.json", field, "is " + sections.dump(), "up to 4 whole numbers");
    for (const nlohmann::json& s : sections) {
        if (!s.is_number_unsigned() || s.get<uint64_t>() > (1u << 16))
            throw_input_error("config.json", field, "holds " + s.dump(), "whole numbers");
        config.rope_sections.push_back(static_cast<int32_t>(s.get<uint64_t>()));
    }
    config.rope_sections.resize(4, 0);
}

namespace qwen2vl_record {

using enum Presence;

// The top-level model_types; a transformers >= 4.52 config's text_config brings its own
// (qwen2_vl_text, qwen2_5_vl_text), which the class choice by architectures[0] covers.
constexpr std::string_view kModelTypes[] = {"qwen2_vl", "qwen2_5_vl"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(kQwen2Attention, dense_ffn());
// qwen2vl's loader: an optional output [E, V] (tied to token_embd without one) and output.bias.
constexpr TensorSpec kLast[] = {kOutputNorm, output_row(required_unless_tied, optional)};
// TextModel.set_gguf_parameters in its order: the counts, the M-RoPE sections (before
// rope_theta), rope_theta, rms_norm_eps, key/value length only from a head_dim in config.json.
constexpr ArchKv kKvs[] = {ArchKv::block_count,
                           ArchKv::context_length,
                           ArchKv::embedding_length,
                           ArchKv::feed_forward_length,
                           ArchKv::head_count,
                           ArchKv::head_count_kv,
                           ArchKv::rope_dimension_sections_given,
                           ArchKv::rope_freq_base,
                           ArchKv::rms_epsilon,
                           ArchKv::key_length_given,
                           ArchKv::value_length_given};
// The vision tower and its merger (after "model." / "language_model." are stripped; mlx-vlm names
// it vision_tower.).
constexpr std::string_view kLeftOut[] = {"visual.", "vision_tower."};

bool claims_qwen2vl(const nlohmann::json& root) {
    const std::string_view first = first_architecture(root);
    return first == "Qwen2VLForConditionalGeneration" ||
           first == "Qwen2_5_VLForConditionalGeneration" || first == "Qwen2VLModel";
}

// transformers' Qwen2VLConfig / Qwen2_5_VLConfig rename the published rope type "mrope" to
// "default" (M-RoPE is no scaling), which is what the converter reads through AutoConfig.
void rename_mrope(nlohmann::json& root) {
    const auto block = root.find(mrope_block_name(root));
    if (block == root.end() || !block->is_object()) return;
    for (const char* key : {"type", "rope_type"})
        if (const auto it = block->find(key); it != block->end() && *it == "mrope") *it = "default";
}

constexpr Architecture kQwen2vl = [] {
    Architecture a{"qwen2vl", kModelTypes, kFirst, kLayer, kLast, kKvs, {}, kLeftOut};
    a.claims_config = claims_qwen2vl;
    a.prepare_config = rename_mrope;
    a.finish_config = read_mrope_sections;
    // qwen2vl.cpp passes the .scale of attention and the output, as qwen2's graph does.
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace qwen2vl_record

const Architecture& qwen2vl_architecture() { return qwen2vl_record::kQwen2vl; }

}  // namespace rebox::arch::detail
