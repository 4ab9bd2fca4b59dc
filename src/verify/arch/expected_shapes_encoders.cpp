// nomic_bert shapes from config.json (see expected_shapes_encoders.hpp), as NomicBertModel in
// nomic-ai's contrastors code builds them: Wqkv is [3 * n_embd, n_embd] (q | k | v), fc11 / fc12
// [n_inner, n_embd], fc2 [n_embd, n_inner], no biases; LayerNorms with biases. gemma-embedding's
// sentence-transformers Dense weights from the modules' own in/out features. modernbert's as
// transformers' ModernBertModel builds them: Wqkv [3 * hidden, hidden], Wo [hidden, hidden], Wi
// [2 * intermediate, hidden] (input | gate), mlp.Wo [hidden, intermediate], bias-free LayerNorms
// [hidden], and no attn_norm in layer 0 (an Identity there).
#include "verify/arch/expected_shapes_encoders.hpp"

#include <charconv>
#include <string>
#include <utility>

namespace rebox::verify_ref {
namespace {

using Shape = std::vector<int64_t>;

std::optional<Shape> nomic_layer_shape(const RefConfig& c, std::string_view rest) {
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

std::optional<Shape> nomic_shape(const RefConfig& c, std::string_view name) {
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
    return nomic_layer_shape(c, name.substr(dot + 1));
}

// "PREFIX{layer}.rest" with layer < num_hidden_layers: rest and the layer, else nullopt.
std::optional<std::pair<uint64_t, std::string_view>> layer_rest(const RefConfig& c,
                                                                std::string_view name,
                                                                std::string_view prefix) {
    if (!name.starts_with(prefix)) return std::nullopt;
    name.remove_prefix(prefix.size());
    const size_t dot = name.find('.');
    uint64_t layer = 0;
    if (dot == std::string_view::npos || dot == 0 || (dot > 1 && name[0] == '0'))
        return std::nullopt;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, layer);
    if (ec != std::errc() || end != name.data() + dot || layer >= c.num_hidden_layers)
        return std::nullopt;
    return std::pair{layer, name.substr(dot + 1)};
}

std::optional<Shape> modernbert_shape(const RefConfig& c, std::string_view name) {
    const int64_t hidden = c.hidden_size, ffn = c.intermediate_size;
    if (name.starts_with("model.")) name.remove_prefix(6);  // ModernBertForMaskedLM
    if (name == "embeddings.tok_embeddings.weight") return Shape{c.vocab_size, hidden};
    if (name == "embeddings.norm.weight" || name == "final_norm.weight") return Shape{hidden};
    const auto at = layer_rest(c, name, "layers.");
    if (!at) return std::nullopt;
    const auto [layer, rest] = *at;
    if (rest == "attn_norm.weight")
        return layer == 0 ? std::nullopt : std::optional<Shape>(Shape{hidden});
    if (rest == "mlp_norm.weight") return Shape{hidden};
    if (rest == "attn.Wqkv.weight") return Shape{3 * hidden, hidden};
    if (rest == "attn.Wo.weight") return Shape{hidden, hidden};
    if (rest == "mlp.Wi.weight") return Shape{2 * ffn, hidden};
    if (rest == "mlp.Wo.weight") return Shape{hidden, ffn};
    return std::nullopt;
}

}  // namespace

// gemma-embedding's Dense modules, as llama.cpp's loader creates dense_2 {n_embd, dense_2_feat_out}
// and dense_3 {dense_3_feat_in, n_embd}: in HF order [out, in].
std::optional<Shape> dense_shape(const RefConfig& c, std::string_view name) {
    const int64_t hidden = c.hidden_size;
    if (name == "2_Dense.linear.weight" && c.dense_2) return Shape{c.dense_2->out, hidden};
    if (name == "3_Dense.linear.weight" && c.dense_3) return Shape{hidden, c.dense_3->in};
    return std::nullopt;
}

std::optional<Shape> expected_encoder_shape(const RefConfig& config, std::string_view hf_name) {
    if (config.model_type == "nomic_bert") return nomic_shape(config, hf_name);
    if (config.model_type == "gemma-embedding") return dense_shape(config, hf_name);
    if (config.model_type == "modernbert") return modernbert_shape(config, hf_name);
    return std::nullopt;
}

}  // namespace rebox::verify_ref
