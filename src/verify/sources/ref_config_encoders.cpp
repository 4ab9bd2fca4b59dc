// verify's reading of nomic_bert's config.json (see ref_config_encoders.hpp). NomicBertConfig is a
// GPT2Config: n_embd, n_layer, n_head, n_inner; convert_hf_to_gguf's TextModel finds them after
// the usual names, rope_theta after the others as rotary_emb_base. NomicBertModel.__init__ then
// trains-length-limits the context: n_positions 8192 with max_trained_positions 2048 becomes 2048,
// 2048 with 2048 becomes 512 (the writer refuses every other pair before verify runs).
#include "verify/sources/ref_config_encoders.hpp"

#include <string_view>

namespace rebox::verify_ref {

namespace {

// ModernBertConfig (transformers): global_rope_theta is the full-attention layers' theta (found
// first in TextModel's search, as rope_theta), local_attention the sliding window (written as
// attention.sliding_window), global_attn_every_n_layers its pattern, and norm_eps the LayerNorm
// epsilon, which TextModel writes as the RMS one and llama.cpp's modern-bert loader reads as
// attention.layer_norm_epsilon: verify expects both.
void add_modernbert_names(nlohmann::json& root) {
    static const char* const kNames[][2] = {
        {"rope_theta", "global_rope_theta"},
        {"sliding_window", "local_attention"},
        {"sliding_window_pattern", "global_attn_every_n_layers"},
        {"rms_norm_eps", "norm_eps"},
        {"layer_norm_eps", "norm_eps"},
    };
    for (const auto& name : kNames)
        if (const auto it = root.find(name[1]); it != root.end() && !it->is_null())
            if (name[0] != std::string_view("layer_norm_eps") || !root.contains(name[0]))
                root[name[0]] = *it;
}

}  // namespace

void add_encoder_config_names(const std::string& model_type, nlohmann::json& root) {
    if (model_type == "modernbert") return add_modernbert_names(root);
    if (model_type != "nomic_bert") return;
    static const char* const kNames[][2] = {
        {"hidden_size", "n_embd"},         {"num_hidden_layers", "n_layer"},
        {"num_attention_heads", "n_head"}, {"intermediate_size", "n_inner"},
        {"rope_theta", "rotary_emb_base"},
    };
    for (const auto& name : kNames) {
        const auto usual = root.find(name[0]);
        const auto gpt2 = root.find(name[1]);
        if ((usual == root.end() || usual->is_null()) && gpt2 != root.end()) root[name[0]] = *gpt2;
    }
    const auto positions = root.find("n_positions");
    if (positions == root.end() || !positions->is_number_unsigned()) return;
    const auto trained_it = root.find("max_trained_positions");
    const nlohmann::json trained = trained_it == root.end() ? nlohmann::json(2048) : *trained_it;
    if (trained != 2048) return;
    if (*positions == 8192)
        root["n_positions"] = 2048;
    else if (*positions == 2048)
        root["n_positions"] = 512;
}

}  // namespace rebox::verify_ref
