// verify's mistral3 (Mistral3ForConditionalGeneration, Ministral3ForCausalLM; converter class
// Mistral3Model, whose Ministral3Model is a LlamaModel for every text model_type but mistral4,
// chosen by architectures[0]; verify then calls the model type by its GGUF name): q/k rows
// permuted, llama3 rope_freqs, TextModel's KVs with key/value length only from a head_dim in
// config.json and its yarn KVs, LlamaModel's vocab_size and rope.dimension_count, and for a
// ministral3 text model rope.scaling.yarn_log_multiplier = mscale_all_dim and
// attention.temperature_scale = llama_4_scaling_beta; an NVFP4 factor is applied on every
// projection and the output (src/models/mistral3.cpp).
#include "verify/arch/ref_arch.hpp"
#include "verify/metadata/kv_checker.hpp"

namespace rebox::verify_ref::detail {
namespace mistral3_ref {

constexpr RefKv kMistral3Kvs[] = {RefKv::rope_freq_base,         RefKv::rms_epsilon,
                                  RefKv::head_dim_lengths_given, RefKv::vocab_size,
                                  RefKv::rope_dimension_count,   RefKv::rope_scaling_yarn};

bool mistral3_selected(const nlohmann::json& root, std::string_view model_type) {
    const std::string_view first = ref_first_architecture(root);
    return model_type != "mistral4" &&
           (first == "Mistral3ForConditionalGeneration" || first == "Ministral3ForCausalLM");
}

// Ministral3Model.set_gguf_parameters reads the two from rope_parameters (else rope_scaling).
void ministral3_numbers(const nlohmann::json& root, RefConfig& c) {
    const auto model_type = root.find("model_type");
    if (model_type == root.end() || *model_type != "ministral3") return;
    const auto block =
        root.find(root.contains("rope_parameters") ? "rope_parameters" : "rope_scaling");
    if (block == root.end() || !block->is_object()) return;
    const auto number = [&](const char* key) -> std::optional<float> {
        const auto it = block->find(key);
        if (it == block->end() || !it->is_number()) return std::nullopt;
        return static_cast<float>(it->get<double>());
    };
    c.yarn_log_multiplier = number("mscale_all_dim");
    c.temperature_scale = number("llama_4_scaling_beta");
}

// Ministral3Model: rope.scaling.yarn_log_multiplier and attention.temperature_scale, both from the
// yarn block of a ministral3 text model, absent without them.
void check_ministral3_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    for (const auto& [suffix, value] :
         {std::pair{".rope.scaling.yarn_log_multiplier", config.yarn_log_multiplier},
          std::pair{".attention.temperature_scale", config.temperature_scale}}) {
        if (value)
            kv.expect_f32(arch + suffix, *value);
        else
            kv.expect_absent(arch + suffix, "not a ministral3 text model");
    }
}

}  // namespace mistral3_ref

const RefArch& ref_mistral3() {
    using namespace mistral3_ref;
    static constexpr std::string_view kModelTypes[] = {"ministral3"};
    static const RefArch kArch{
        .gguf_arch = "mistral3",
        .model_types = kModelTypes,
        .selects = mistral3_selected,
        .finish_config = ministral3_numbers,
        .kvs = kMistral3Kvs,
        .check_kvs = check_ministral3_kvs,
        .rope_permute_qk = true,
        .llama3_rope_freqs = true,
        .scale_roles = kScaleAttention | kScaleFfn | kScaleExperts | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
