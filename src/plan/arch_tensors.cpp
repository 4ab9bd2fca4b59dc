// qwen3 / qwen2 / llama tensor sets and shapes from notes/gguf.md §3.2 (src/models/qwen3.cpp
// load_arch_tensors): E = hidden, H = heads, Hkv = kv heads, D = head_dim, F = intermediate, V =
// vocab.
#include "arch_tensors.hpp"

#include <array>
#include <charconv>
#include <limits>

namespace rebox::plan_detail {
namespace {

// Per-layer tensors in the order rebox writes them (§3.2 order, optional biases beside their
// weight).
constexpr std::array<std::string_view, 14> kLayerOrder = {
    "attn_norm.weight",   "attn_q.weight",      "attn_q.bias",     "attn_k.weight",
    "attn_k.bias",        "attn_v.weight",      "attn_v.bias",     "attn_output.weight",
    "attn_q_norm.weight", "attn_k_norm.weight", "ffn_norm.weight", "ffn_gate.weight",
    "ffn_up.weight",      "ffn_down.weight"};

bool has_qk_norm(std::string_view arch) { return arch == "qwen3"; }
bool has_qkv_bias(std::string_view arch) { return arch == "qwen2"; }

// "blk.N.rest" -> (N, rest).
std::optional<std::pair<int64_t, std::string_view>> split_layer(std::string_view name) {
    constexpr std::string_view kPrefix = "blk.";
    if (!name.starts_with(kPrefix)) return std::nullopt;
    name.remove_prefix(kPrefix.size());
    const size_t dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    int64_t layer = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, layer);
    if (ec != std::errc() || end != name.data() + dot) return std::nullopt;
    return std::make_pair(layer, name.substr(dot + 1));
}

}  // namespace

std::optional<int64_t> layer_of(std::string_view gguf_name) {
    const auto split = split_layer(gguf_name);
    if (!split) return std::nullopt;
    return split->first;
}

std::optional<std::vector<int64_t>> expected_ne(std::string_view arch, const ModelConfig& config,
                                                std::string_view gguf_name) {
    const int64_t E = config.hidden_size, H = config.num_attention_heads,
                  Hkv = config.num_key_value_heads, D = config.head_dim,
                  F = config.intermediate_size, V = config.vocab_size;
    if (gguf_name == "token_embd.weight" || gguf_name == "output.weight")
        return std::vector<int64_t>{E, V};
    if (gguf_name == "output_norm.weight") return std::vector<int64_t>{E};
    const auto split = split_layer(gguf_name);
    if (!split) return std::nullopt;
    const std::string_view rest = split->second;
    if (rest == "attn_norm.weight" || rest == "ffn_norm.weight") return std::vector<int64_t>{E};
    if (rest == "attn_q.weight") return std::vector<int64_t>{E, D * H};
    if (rest == "attn_k.weight" || rest == "attn_v.weight") return std::vector<int64_t>{E, D * Hkv};
    if (rest == "attn_output.weight") return std::vector<int64_t>{D * H, E};
    if (rest == "ffn_gate.weight" || rest == "ffn_up.weight") return std::vector<int64_t>{E, F};
    if (rest == "ffn_down.weight") return std::vector<int64_t>{F, E};
    if (has_qk_norm(arch) && (rest == "attn_q_norm.weight" || rest == "attn_k_norm.weight"))
        return std::vector<int64_t>{D};
    if (has_qkv_bias(arch)) {
        if (rest == "attn_q.bias") return std::vector<int64_t>{D * H};
        if (rest == "attn_k.bias" || rest == "attn_v.bias") return std::vector<int64_t>{D * Hkv};
    }
    return std::nullopt;
}

std::vector<std::string> required_tensors(std::string_view arch, const ModelConfig& config) {
    std::vector<std::string> names = {"token_embd.weight", "output_norm.weight"};
    if (!config.tie_word_embeddings) names.push_back("output.weight");
    for (uint32_t layer = 0; layer < config.num_hidden_layers; ++layer) {
        for (std::string_view rest : kLayerOrder) {
            if (rest.ends_with(".bias")) continue;  // optional in every graph
            if (!has_qk_norm(arch) &&
                (rest == "attn_q_norm.weight" || rest == "attn_k_norm.weight"))
                continue;
            names.push_back("blk." + std::to_string(layer) + "." + std::string(rest));
        }
    }
    return names;
}

std::pair<int64_t, int> output_rank(std::string_view gguf_name) {
    constexpr int64_t kLast = std::numeric_limits<int64_t>::max();
    if (gguf_name == "token_embd.weight") return {-1, 0};
    if (gguf_name == "output_norm.weight") return {kLast, 0};
    if (gguf_name == "output.weight") return {kLast, 1};
    if (const auto split = split_layer(gguf_name)) {
        for (size_t i = 0; i < kLayerOrder.size(); ++i)
            if (kLayerOrder[i] == split->second) return {split->first, static_cast<int>(i)};
        return {split->first, static_cast<int>(kLayerOrder.size())};
    }
    return {kLast - 1, 0};
}

}  // namespace rebox::plan_detail
