// verify's olmo2 (Olmo2ForCausalLM, Olmo3ForCausalLM; converter class Olmo2Model): no transform;
// q_norm / k_norm span the whole projection (heads * head_dim, kv_heads * head_dim); TextModel's
// KVs with key/value length only from a head_dim in config.json, and with a sliding_window the
// window and one flag per layer (layer_types == "sliding_attention", else every 4th layer full);
// Olmo 3's yarn rope_scaling as TextModel writes it; an NVFP4 factor is applied on attention and
// the output only (src/models/olmo2.cpp).
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {
namespace olmo2_ref {

constexpr RefKv kOlmo2Kvs[] = {RefKv::rope_freq_base,         RefKv::rms_epsilon,
                               RefKv::head_dim_lengths_given, RefKv::sliding_window,
                               RefKv::sliding_window_layers,  RefKv::rope_scaling_yarn};

std::optional<std::vector<int64_t>> olmo2_shape(const RefConfig& c, std::string_view name) {
    const int64_t q_width = static_cast<int64_t>(c.num_attention_heads) * c.head_dim;
    const int64_t kv_width = static_cast<int64_t>(c.num_key_value_heads) * c.head_dim;
    if (name.ends_with(".self_attn.q_norm.weight")) return std::vector<int64_t>{q_width};
    if (name.ends_with(".self_attn.k_norm.weight")) return std::vector<int64_t>{kv_width};
    return std::nullopt;
}

void olmo2_sliding_layers(const nlohmann::json& root, RefConfig& c) {
    c.sliding_layers.clear();
    const auto types = root.find("layer_types");
    for (uint32_t i = 0; i < c.num_hidden_layers; ++i) {
        if (types != root.end() && types->is_array())
            c.sliding_layers.push_back(i < types->size() && (*types)[i] == "sliding_attention");
        else
            c.sliding_layers.push_back((i + 1) % 4 != 0);
    }
}

}  // namespace olmo2_ref

const RefArch& ref_olmo2() {
    using namespace olmo2_ref;
    static constexpr std::string_view kModelTypes[] = {"olmo2", "olmo3"};
    static const RefArch kArch{.gguf_arch = "olmo2",
                               .model_types = kModelTypes,
                               .finish_config = olmo2_sliding_layers,
                               .shape = olmo2_shape,
                               .kvs = kOlmo2Kvs,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
