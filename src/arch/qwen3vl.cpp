// qwen3vl (Qwen3-VL): the text model of Qwen3VLForConditionalGeneration as llama.cpp's converter
// writes it (conversion/qwen3vl.py, Qwen3VLTextModel -> Qwen3Model -> Qwen2Model -> TextModel,
// chosen by architectures[0]) for its qwen3vl graph (src/models/qwen3vl.cpp): qwen3's tensors (per-
// head q/k RMSNorms, no biases, NEOX rows, an optional output tied to token_embd without one) and
// TextModel's KVs with rope.dimension_sections, the rope parameters' mrope_section padded to 4,
// then n_deepstack_layers = the length of vision_config.deepstack_visual_indexes (the vision
// layers whose merged features llama.cpp adds to the first text layers; the loader's input width
// is hidden_size x (1 + n_deepstack_layers)). The published layout is transformers'
// model.language_model.* + model.visual.* + lm_head; the vision tower is the mmproj's
// (src/arch/vision/qwen3vl_vision.cpp), left out here.
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace qwen3vl_record {

using enum Presence;

// The top-level model_type; text_config brings its own (qwen3_vl_text), which the class choice by
// architectures[0] covers.
constexpr std::string_view kModelTypes[] = {"qwen3_vl"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(kQwen3Attention, dense_ffn());
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};
// Qwen2VL's order (TextModel.set_gguf_parameters: the counts, the M-RoPE sections before
// rope_theta, rope_theta, rms_norm_eps, key/value length from config.json's head_dim), then
// Qwen3VLTextModel's n_deepstack_layers.
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
                           ArchKv::value_length_given,
                           ArchKv::n_deepstack_layers};
// The vision tower, its merger and deepstack mergers (after "model." / "language_model." are
// stripped; mlx-vlm names it vision_tower.).
constexpr std::string_view kLeftOut[] = {"visual.", "vision_tower."};

bool claims_qwen3vl(const nlohmann::json& root) {
    return first_architecture(root) == "Qwen3VLForConditionalGeneration";
}

// transformers' Qwen3VLVisionConfig default for deepstack_visual_indexes (the converter reads the
// vision config through AutoConfig).
constexpr uint32_t kDefaultDeepstackLayers = 3;  // [8, 16, 24]

void read_qwen3vl(const nlohmann::json& root, ModelConfig& config) {
    read_mrope_sections(root, config);
    config.deepstack_layers = kDefaultDeepstackLayers;
    const auto vision = root.find("vision_config");
    if (vision == root.end() || !vision->is_object()) return;
    const auto indexes = vision->find("deepstack_visual_indexes");
    if (indexes == vision->end()) return;
    if (!indexes->is_array() || indexes->size() > 256)
        throw_input_error("config.json", "vision_config.deepstack_visual_indexes",
                          "is " + indexes->dump(), "a list of vision layer indexes");
    for (const nlohmann::json& index : *indexes)
        if (!index.is_number_unsigned() || index.get<uint64_t>() > 4096)
            throw_input_error("config.json", "vision_config.deepstack_visual_indexes",
                              "holds " + index.dump(), "vision layer indexes");
    config.deepstack_layers = static_cast<uint32_t>(indexes->size());
}

constexpr Architecture kQwen3vl = [] {
    Architecture a{"qwen3vl", kModelTypes, kFirst, kLayer, kLast, kKvs, {}, kLeftOut};
    a.claims_config = claims_qwen3vl;
    a.finish_config = read_qwen3vl;
    // qwen3vl.cpp passes the .scale of attention and the output; its feed-forward takes none.
    a.nvfp4_scales = {.output = true};
    return a;
}();

// qwen3vlmoe (Qwen3-VL-30B-A3B, 235B-A22B: Qwen3VLMoeForConditionalGeneration's text model;
// Qwen3VLMoeTextModel -> Qwen3MoeModel -> Qwen2MoeModel -> TextModel, src/models/qwen3vlmoe.cpp):
// qwen3's attention and in every layer the router and experts. transformers stores the experts
// fused and transposed against llama.cpp's layout: mlp.experts.gate_up_proj [E, hidden, 2F] (gate
// columns, then up) and mlp.experts.down_proj [E, F, hidden], each expert transposed by the
// converter (RowTransform::experts_t_*); per-expert tensors are stacked as qwen3moe's.
constexpr std::string_view kMoeModelTypes[] = {"qwen3_vl_moe"};
constexpr TensorSpec transposed_experts(std::string_view hf, std::string_view gguf, bool down,
                                        RowTransform rows) {
    TensorSpec spec{hf,
                    gguf,
                    optional,
                    absent,
                    3,
                    down ? std::array{Dim::expert_ffn, Dim::hidden, Dim::experts}
                         : std::array{Dim::hidden, Dim::expert_ffn, Dim::experts},
                    rows};
    spec.hf_bare = true;
    return spec;
}
constexpr auto kMoeLayer =
    join(kQwen3Attention, kQwenMoeFfn,
         std::array{transposed_experts("mlp.experts.gate_up_proj", "ffn_gate_exps", false,
                                       RowTransform::experts_t_first_half),
                    transposed_experts("mlp.experts.gate_up_proj", "ffn_up_exps", false,
                                       RowTransform::experts_t_second_half),
                    transposed_experts("mlp.experts.down_proj", "ffn_down_exps", true,
                                       RowTransform::experts_t)});
// Qwen2MoeModel's order: TextModel's (sections before rope_theta, the expert counts after the
// epsilon, key/value length from head_dim), expert_feed_forward_length, then n_deepstack_layers.
constexpr ArchKv kMoeKvs[] = {ArchKv::block_count,
                              ArchKv::context_length,
                              ArchKv::embedding_length,
                              ArchKv::feed_forward_length_given,
                              ArchKv::head_count,
                              ArchKv::head_count_kv,
                              ArchKv::rope_dimension_sections_given,
                              ArchKv::rope_freq_base,
                              ArchKv::rms_epsilon,
                              ArchKv::expert_count,
                              ArchKv::expert_used_count,
                              ArchKv::key_length_given,
                              ArchKv::value_length_given,
                              ArchKv::expert_feed_forward_length,
                              ArchKv::n_deepstack_layers};

bool claims_qwen3vlmoe(const nlohmann::json& root) {
    return first_architecture(root) == "Qwen3VLMoeForConditionalGeneration";
}

constexpr Architecture kQwen3vlMoe = [] {
    Architecture a{"qwen3vlmoe", kMoeModelTypes, kFirst, kMoeLayer, kLast, kMoeKvs, {}, kLeftOut};
    a.claims_config = claims_qwen3vlmoe;
    a.finish_config = read_qwen3vl;
    // qwen3vlmoe.cpp passes the .scale of attention and the output; its experts take none.
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace qwen3vl_record

const Architecture& qwen3vl_architecture() { return qwen3vl_record::kQwen3vl; }
const Architecture& qwen3vlmoe_architecture() { return qwen3vl_record::kQwen3vlMoe; }

}  // namespace rebox::arch::detail
