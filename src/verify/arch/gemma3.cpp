// verify's gemma3 (Gemma3ForCausalLM, Gemma3ForConditionalGeneration's text model): transformers'
// Gemma3TextConfig defaults (a multimodal config gives text_config little more than the widths and
// the layer count), gemma's norm shift, token_embd cut to vocab_size rows (the source may pad the
// embedding), the local rope base, final softcapping and sliding window; an NVFP4 factor is applied
// on attention and the output.
#include <string_view>
#include <utility>

#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref {

void fill_gemma3_text_defaults(nlohmann::json& root, bool embedding) {
    static const std::pair<const char*, const char*> kDefaults[] = {
        {"vocab_size", "262208"},
        {"num_attention_heads", "8"},
        {"num_key_value_heads", "4"},
        {"head_dim", "256"},
        {"max_position_embeddings", "131072"},
        {"rms_norm_eps", "1e-06"},
        {"rope_theta", "1000000.0"},
        {"rope_local_base_freq", "10000.0"},
        {"sliding_window", "4096"},
        {"sliding_window_pattern", "6"},
    };
    for (const auto& [key, value] : kDefaults) {
        const auto it = root.find(key);
        if ((it == root.end() || it->is_null()) &&
            !(embedding && std::string_view(key) == "sliding_window"))  // read as written
            root[key] = nlohmann::json::parse(value);
    }
}

namespace detail {

const RefArch& ref_gemma3() {
    static constexpr std::string_view kModelTypes[] = {"gemma3_text", "gemma3"};
    static constexpr RefKv kKvs[] = {
        RefKv::rope_freq_base, RefKv::rope_freq_base_swa, RefKv::rms_epsilon,
        RefKv::key_length,     RefKv::value_length,       RefKv::final_logit_softcapping,
        RefKv::sliding_window,
    };
    static const RefArch kArch{
        .gguf_arch = "gemma3",
        .model_types = kModelTypes,
        .prepare_config = [](nlohmann::json& root) { fill_gemma3_text_defaults(root, false); },
        .kvs = kKvs,
        .norm_plus_one = true,
        .vocab_rows_cut = true,
        .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace detail
}  // namespace rebox::verify_ref
