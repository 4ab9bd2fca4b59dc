// verify's nomic-bert (NomicBertModel, nomic-ai's contrastors code). Its config.json is a
// GPT2Config: n_embd, n_layer, n_head, n_inner, which convert_hf_to_gguf's TextModel finds after
// the usual names, rotary_emb_base after the others as rope_theta; NomicBertModel.__init__ then
// limits the context to the trained length: n_positions 8192 with max_trained_positions 2048
// becomes 2048, 2048 with 2048 becomes 512 (the writer refuses every other pair before verify
// runs). Shapes: Wqkv [3 * n_embd, n_embd] (q | k | v), fc11 / fc12 [n_inner, n_embd], fc2
// [n_embd, n_inner], no biases; LayerNorms with biases. An encoder with rope.freq_base.
#include <charconv>
#include <string>

#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {
namespace nomic_bert_ref {

using Shape = std::vector<int64_t>;

void gpt2_names(nlohmann::json& root) {
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

std::optional<Shape> layer_shape(const RefConfig& c, std::string_view rest) {
    const int64_t hidden = c.hidden_size, ffn = c.intermediate_size;
    if (rest == "attn.Wqkv.weight") return Shape{3 * hidden, hidden};
    if (rest == "attn.out_proj.weight") return Shape{hidden, hidden};
    if (rest == "mlp.fc11.weight" || rest == "mlp.fc12.weight") return Shape{ffn, hidden};
    if (rest == "mlp.fc2.weight") return Shape{hidden, ffn};
    for (const std::string_view norm : {"norm1.", "norm2."})
        if (rest == std::string(norm) + "weight" || rest == std::string(norm) + "bias")
            return Shape{hidden};
    return std::nullopt;
}

std::optional<Shape> shape(const RefConfig& c, std::string_view name) {
    const int64_t hidden = c.hidden_size;
    if (name == "embeddings.word_embeddings.weight") return Shape{c.vocab_size, hidden};
    if (name == "embeddings.token_type_embeddings.weight") return Shape{c.type_vocab_size, hidden};
    if (name == "emb_ln.weight" || name == "emb_ln.bias") return Shape{hidden};
    constexpr std::string_view kLayers = "encoder.layers.";
    if (!name.starts_with(kLayers)) return std::nullopt;
    name.remove_prefix(kLayers.size());
    const size_t dot = name.find('.');
    uint64_t layer = 0;
    if (dot == std::string_view::npos) return std::nullopt;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, layer);
    if (ec != std::errc() || end != name.data() + dot || layer >= c.num_hidden_layers)
        return std::nullopt;
    return layer_shape(c, name.substr(dot + 1));
}

}  // namespace nomic_bert_ref

const RefArch& ref_nomic_bert() {
    using namespace nomic_bert_ref;
    static constexpr std::string_view kModelTypes[] = {"nomic_bert"};
    static constexpr RefKv kKvs[] = {RefKv::rope_freq_base};
    static const RefArch kArch{.gguf_arch = "nomic-bert",
                               .model_types = kModelTypes,
                               .prepare_config = gpt2_names,
                               .shape = shape,
                               .kvs = kKvs,
                               .encoder = true,
                               .bert_model_class = true};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
