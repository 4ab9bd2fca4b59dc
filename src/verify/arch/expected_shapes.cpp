// Per-tensor shapes from config.json (docs/gguf.md §3.2 in HF order: nn.Linear weights are
// [out_features, in_features]): the architecture's own names first (its record's shape hook), then
// the decoder names the decoder-only families share (mixtral's block_sparse_moe ones included).
#include "verify/arch/expected_shapes.hpp"

#include <charconv>
#include <string>

#include "verify/arch/ref_arch.hpp"

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

// "experts.{e}.REST" -> REST when {e} is a decimal; else empty.
std::string_view after_expert_index(std::string_view name, std::string_view prefix) {
    if (!name.starts_with(prefix)) return {};
    name.remove_prefix(prefix.size());
    const size_t dot = name.find('.');
    if (dot == 0 || dot == std::string_view::npos) return {};
    for (size_t i = 0; i < dot; ++i)
        if (name[i] < '0' || name[i] > '9') return {};
    return name.substr(dot + 1);
}

}  // namespace

// Mixture-of-experts tensors (qwen3_moe, qwen2_moe: mlp.*; mixtral: block_sparse_moe.*), HF
// order. One expert is [moe_ffn, hidden] (down: [hidden, moe_ffn]); MLX stacks E of them.
std::optional<std::vector<int64_t>> expected_moe_shape(const RefConfig& c, std::string_view rest) {
    using Shape = std::vector<int64_t>;
    const int64_t hidden = c.hidden_size, experts = c.num_experts;
    const int64_t moe_ffn = c.moe_intermediate_size.value_or(c.intermediate_size);
    const int64_t shared = c.shared_expert_intermediate_size.value_or(0);
    if (rest == "mlp.gate.weight" || rest == "block_sparse_moe.gate.weight")
        return Shape{experts, hidden};
    if (rest == "mlp.shared_expert_gate.weight") return Shape{1, hidden};
    if (rest == "mlp.shared_expert.gate_proj.weight" || rest == "mlp.shared_expert.up_proj.weight")
        return Shape{shared, hidden};
    if (rest == "mlp.shared_expert.down_proj.weight") return Shape{hidden, shared};
    for (const std::string_view stack : {"mlp.switch_mlp.", "block_sparse_moe.switch_mlp."}) {
        if (!rest.starts_with(stack)) continue;
        const std::string_view module = rest.substr(stack.size());
        if (module == "gate_proj.weight" || module == "up_proj.weight")
            return Shape{experts, moe_ffn, hidden};
        if (module == "down_proj.weight") return Shape{experts, hidden, moe_ffn};
    }
    const std::string_view qwen = after_expert_index(rest, "mlp.experts.");
    if (qwen == "gate_proj.weight" || qwen == "up_proj.weight") return Shape{moe_ffn, hidden};
    if (qwen == "down_proj.weight") return Shape{hidden, moe_ffn};
    const std::string_view mixtral = after_expert_index(rest, "block_sparse_moe.experts.");
    if (mixtral == "w1.weight" || mixtral == "w3.weight") return Shape{moe_ffn, hidden};
    if (mixtral == "w2.weight") return Shape{hidden, moe_ffn};
    return std::nullopt;
}

std::optional<std::vector<int64_t>> expected_hf_shape(const RefConfig& c, std::string_view name) {
    const int64_t hidden = c.hidden_size, vocab = c.vocab_size, ffn = c.intermediate_size;
    const int64_t q_width = static_cast<int64_t>(c.num_attention_heads) * c.head_dim;
    const int64_t kv_width = static_cast<int64_t>(c.num_key_value_heads) * c.head_dim;
    if (const RefArch* arch = find_ref_arch(c.model_type); arch && arch->shape)
        if (auto own = arch->shape(c, name)) return own;
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
    // phi3's fused projections: q, k, v rows stacked; gate rows, then up rows.
    if (rest == "self_attn.qkv_proj.weight")
        return std::vector<int64_t>{q_width + 2 * kv_width, hidden};
    if (rest == "self_attn.qkv_proj.bias") return std::vector<int64_t>{q_width + 2 * kv_width};
    if (rest == "mlp.gate_up_proj.weight") return std::vector<int64_t>{2 * ffn, hidden};
    return expected_moe_shape(c, rest);
}

bool hf_layer_at_or_past(std::string_view name, uint64_t layers) {
    uint64_t layer = 0;
    std::string_view rest;
    return split_layer(name, &layer, &rest) && layer >= layers;
}

bool layer_in_range(const RefConfig& config, std::string_view name) {
    uint64_t layer = 0;
    std::string_view rest;
    const RefArch* arch = find_ref_arch(config.model_type);
    const uint64_t mtp = arch && arch->mtp_in_layers ? config.mtp_layers : 0;
    return !split_layer(name, &layer, &rest) || layer < config.num_hidden_layers + mtp;
}

}  // namespace rebox::verify_ref
