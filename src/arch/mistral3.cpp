// mistral3 (Mistral Small 3.1 / 3.2, Magistral Small, Devstral Small 2, Ministral 3): llama.cpp's
// mistral3 graph (src/models/mistral3.cpp) as the converter's Mistral3Model writes it for every
// text model_type but mistral4 (conversion/mistral3.py): its Ministral3Model is LlamaModel under
// the GGUF name mistral3, so llama's rows (q/k permuted, optional biases), LlamaModel's KVs
// (key/value length only from a head_dim in config.json, vocab_size, rope.dimension_count),
// llama3 rope_freqs and TextModel's yarn KVs. A ministral3 text model must have a yarn
// rope_parameters, whose mscale_all_dim (as given, not x0.1 as in deepseek2) and
// llama_4_scaling_beta become rope.scaling.yarn_log_multiplier and attention.temperature_scale.
// Mistral3ForConditionalGeneration's text model is written (language_model. stripped); its vision
// tower and projector are left out of it (the mmproj file's: src/arch/vision/pixtral_vision.cpp).
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace mistral3_record {

using enum Presence;

// The converter picks Mistral3Model by architectures[0]; a text model_type of plain mistral
// (Mistral Small 3.x) comes with it, so the class decides, not model_type.
constexpr std::string_view kModelTypes[] = {"ministral3"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
// The mistral3 loader is llama's: optional biases on q/k/v/o and the feed-forward projections.
constexpr auto kLayer = join(kLlamaAttention, dense_ffn(optional));
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};
// TextModel.set_gguf_parameters (key/value length only from a head_dim in config.json), then
// LlamaModel's vocab_size and rope.dimension_count, then Ministral3Model's two.
constexpr ArchKv kKvs[] = {ArchKv::context_length,
                           ArchKv::embedding_length,
                           ArchKv::block_count,
                           ArchKv::feed_forward_length,
                           ArchKv::head_count,
                           ArchKv::head_count_kv,
                           ArchKv::rope_freq_base,
                           ArchKv::rms_epsilon,
                           ArchKv::key_length_given,
                           ArchKv::value_length_given,
                           ArchKv::vocab_size,
                           ArchKv::rope_dimension_count,
                           ArchKv::rope_scaling_yarn_log_multiplier,
                           ArchKv::attention_temperature_scale};
constexpr ExtraTensor kExtras[] = {ExtraTensor::rope_freqs_llama3};
// Pixtral's tower and the projector (both checkpoint layouts, after language_model. / model.).
constexpr std::string_view kLeftOut[] = {"vision_tower.", "multi_modal_projector."};

bool claims_mistral3(const nlohmann::json& root) {
    const std::string_view first = first_architecture(root);
    const auto model_type = root.find("model_type");
    const bool mistral4 = model_type != root.end() && *model_type == "mistral4";
    return !mistral4 &&
           (first == "Mistral3ForConditionalGeneration" || first == "Ministral3ForCausalLM");
}

[[noreturn]] void refuse(const std::string& field, const std::string& what) {
    throw_input_error("config.json", field, what,
                      "a ministral3 rope_parameters of rope_type yarn with mscale_all_dim and "
                      "llama_4_scaling_beta, as Ministral 3 and Devstral 2 ship it");
}

// Ministral3Model.set_gguf_parameters for a ministral3 text model: its asserts (a yarn
// rope_parameters) and the two numbers it reads from it.
void read_ministral3_scaling(const nlohmann::json& root, ModelConfig& config) {
    config.yarn_log_multiplier.reset();
    config.attn_temperature_scale.reset();
    const auto model_type = root.find("model_type");
    if (model_type == root.end() || *model_type != "ministral3") return;
    const char* block_name = root.contains("rope_parameters") ? "rope_parameters" : "rope_scaling";
    if (!config.rope_scaling || config.rope_scaling->type != "yarn")
        refuse(block_name, config.rope_scaling ? "rope_type is '" + config.rope_scaling->type + "'"
                                               : "has no rope_type (absent, null or default)");
    const nlohmann::json& block = root.at(block_name);
    const auto number = [&](const char* key) {
        const auto it = block.find(key);
        if (it == block.end() || !it->is_number())
            refuse(std::string(block_name) + "." + key, "missing or not a number");
        return static_cast<float>(it->get<double>());
    };
    config.yarn_log_multiplier = number("mscale_all_dim");
    config.attn_temperature_scale = number("llama_4_scaling_beta");
}

constexpr Architecture kMistral3 = [] {
    Architecture a{"mistral3", kModelTypes, kFirst, kLayer, kLast, kKvs, kExtras, kLeftOut};
    a.claims_config = claims_mistral3;
    a.finish_config = read_ministral3_scaling;
    a.rope_yarn = true;
    // mistral3.cpp passes the .scale of output, the dense FFN and the experts.
    a.nvfp4_scales = {.output = true, .dense_ffn = true, .experts = true};
    return a;
}();

}  // namespace mistral3_record

const Architecture& mistral3_architecture() { return mistral3_record::kMistral3; }

}  // namespace rebox::arch::detail
