// Per-tensor shapes from config.json for the decoder-only families rebox writes (docs/gguf.md §3.2
// in HF order: nn.Linear weights are [out_features, in_features]).
#include "expected_shapes.hpp"

#include <charconv>
#include <string>

namespace rebox::verify_ref {
namespace {

// Splits "layers.N.<rest>" into N and rest; false for other names.
bool split_layer(std::string_view name, uint64_t* layer, std::string_view* rest) {
    constexpr std::string_view kLayers = "layers.";
    if (name.substr(0, kLayers.size()) != kLayers) return false;
    name.remove_prefix(kLayers.size());
    const size_t dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0) return false;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, *layer);
    if (ec != std::errc() || end != name.data() + dot) return false;
    *rest = name.substr(dot + 1);
    return true;
}

}  // namespace

std::optional<std::vector<int64_t>> expected_hf_shape(const ModelConfig& c, std::string_view name) {
    const int64_t hidden = c.hidden_size, vocab = c.vocab_size, ffn = c.intermediate_size;
    const int64_t q_width = static_cast<int64_t>(c.num_attention_heads) * c.head_dim;
    const int64_t kv_width = static_cast<int64_t>(c.num_key_value_heads) * c.head_dim;
    if (name == "embed_tokens.weight" || name == "lm_head.weight")
        return std::vector<int64_t>{vocab, hidden};
    if (name == "norm.weight") return std::vector<int64_t>{hidden};
    uint64_t layer = 0;
    std::string_view rest;
    if (!split_layer(name, &layer, &rest)) return std::nullopt;
    if (rest == "input_layernorm.weight" || rest == "post_attention_layernorm.weight" ||
        rest == "pre_feedforward_layernorm.weight" || rest == "post_feedforward_layernorm.weight")
        return std::vector<int64_t>{hidden};
    if (rest == "self_attn.q_proj.weight") return std::vector<int64_t>{q_width, hidden};
    if (rest == "self_attn.k_proj.weight" || rest == "self_attn.v_proj.weight")
        return std::vector<int64_t>{kv_width, hidden};
    if (rest == "self_attn.o_proj.weight") return std::vector<int64_t>{hidden, q_width};
    if (rest == "self_attn.q_proj.bias") return std::vector<int64_t>{q_width};
    if (rest == "self_attn.k_proj.bias" || rest == "self_attn.v_proj.bias")
        return std::vector<int64_t>{kv_width};
    if (rest == "self_attn.q_norm.weight" || rest == "self_attn.k_norm.weight")
        return std::vector<int64_t>{static_cast<int64_t>(c.head_dim)};
    if (rest == "mlp.gate_proj.weight" || rest == "mlp.up_proj.weight")
        return std::vector<int64_t>{ffn, hidden};
    if (rest == "mlp.down_proj.weight") return std::vector<int64_t>{hidden, ffn};
    return std::nullopt;
}

bool layer_in_range(const ModelConfig& config, std::string_view name) {
    uint64_t layer = 0;
    std::string_view rest;
    return !split_layer(name, &layer, &rest) || layer < config.num_hidden_layers;
}

}  // namespace rebox::verify_ref
