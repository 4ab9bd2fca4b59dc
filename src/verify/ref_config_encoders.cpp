// verify's reading of nomic_bert's config.json (see ref_config_encoders.hpp). NomicBertConfig is a
// GPT2Config: n_embd, n_layer, n_head, n_inner; convert_hf_to_gguf's TextModel finds them after
// the usual names, rope_theta after the others as rotary_emb_base. NomicBertModel.__init__ then
// trains-length-limits the context: n_positions 8192 with max_trained_positions 2048 becomes 2048,
// 2048 with 2048 becomes 512 (the writer refuses every other pair before verify runs).
#include "ref_config_encoders.hpp"

namespace rebox::verify_ref {

void add_encoder_config_names(const std::string& model_type, nlohmann::json& root) {
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
