// verify's apertus (ApertusForCausalLM; converter class ApertusModel, a LlamaModel with
// undo_permute off): no transform (NEOX rope); q_norm / k_norm per head; only up / down
// projections; llama3 rope_freqs; TextModel's KVs with key/value length only from a head_dim in
// config.json, then vocab_size and rope.dimension_count; each layer's mlp.act_fn.alpha_n, alpha_p,
// beta and eps (one number each) into the FLOAT32 arrays xielu.alpha_n ... xielu.eps, one entry per
// layer in layer order; an NVFP4 factor is applied on attention and the output only
// (src/models/apertus.cpp).
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {
namespace apertus_ref {

constexpr RefKv kApertusKvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon,
                                 RefKv::head_dim_lengths_given, RefKv::vocab_size,
                                 RefKv::rope_dimension_count};

constexpr RefLayerScalar kApertusScalars[] = {{"mlp.act_fn.alpha_n", "xielu.alpha_n"},
                                              {"mlp.act_fn.alpha_p", "xielu.alpha_p"},
                                              {"mlp.act_fn.beta", "xielu.beta"},
                                              {"mlp.act_fn.eps", "xielu.eps"}};

std::optional<std::vector<int64_t>> apertus_shape(const RefConfig& c, std::string_view name) {
    const int64_t hidden = c.hidden_size;
    if (name.ends_with(".attention_layernorm.weight") ||
        name.ends_with(".feedforward_layernorm.weight"))
        return std::vector<int64_t>{hidden};
    return std::nullopt;
}

}  // namespace apertus_ref

const RefArch& ref_apertus() {
    using namespace apertus_ref;
    static constexpr std::string_view kModelTypes[] = {"apertus"};
    static const RefArch kArch{.gguf_arch = "apertus",
                               .model_types = kModelTypes,
                               .shape = apertus_shape,
                               .kvs = kApertusKvs,
                               .llama3_rope_freqs = true,
                               .scale_roles = kScaleAttention | kScaleOutput,
                               .layer_scalars = kApertusScalars};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
