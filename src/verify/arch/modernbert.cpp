// verify's modern-bert (ModernBertModel, ModernBertForMaskedLM). ModernBertConfig's names:
// global_rope_theta is the full-attention layers' theta (found first in TextModel's search, as
// rope_theta), local_attention the sliding window (written as attention.sliding_window),
// global_attn_every_n_layers its pattern, and norm_eps the LayerNorm epsilon, which TextModel
// writes as the RMS one and llama.cpp's modern-bert loader reads as attention.layer_norm_epsilon:
// verify expects both. Shapes as transformers builds them: Wqkv [3 * hidden, hidden], Wo
// [hidden, hidden], Wi [2 * intermediate, hidden] (input | gate), mlp.Wo [hidden, intermediate],
// bias-free LayerNorms [hidden], and no attn_norm in layer 0 (an Identity there). Its byte-level
// BPE vocabulary is written without token types, and a lone ByteLevel pre-tokenizer is named
// "modern-bert" (llama.cpp's converter knows it by its hash).
#include <charconv>
#include <string_view>
#include <utility>

#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref::detail {
namespace modernbert_ref {

using Shape = std::vector<int64_t>;

void modernbert_names(nlohmann::json& root) {
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

// "layers.{layer}.rest" with layer < num_hidden_layers and no leading zero: the layer and rest.
std::optional<std::pair<uint64_t, std::string_view>> layer_rest(const RefConfig& c,
                                                                std::string_view name) {
    constexpr std::string_view kLayers = "layers.";
    if (!name.starts_with(kLayers)) return std::nullopt;
    name.remove_prefix(kLayers.size());
    const size_t dot = name.find('.');
    uint64_t layer = 0;
    if (dot == std::string_view::npos || dot == 0 || (dot > 1 && name[0] == '0'))
        return std::nullopt;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, layer);
    if (ec != std::errc() || end != name.data() + dot || layer >= c.num_hidden_layers)
        return std::nullopt;
    return std::pair{layer, name.substr(dot + 1)};
}

std::optional<Shape> shape(const RefConfig& c, std::string_view name) {
    const int64_t hidden = c.hidden_size, ffn = c.intermediate_size;
    if (name.starts_with("model.")) name.remove_prefix(6);  // ModernBertForMaskedLM
    if (name == "embeddings.tok_embeddings.weight") return Shape{c.vocab_size, hidden};
    if (name == "embeddings.norm.weight" || name == "final_norm.weight") return Shape{hidden};
    const auto at = layer_rest(c, name);
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

}  // namespace modernbert_ref

const RefArch& ref_modernbert() {
    using namespace modernbert_ref;
    static constexpr std::string_view kModelTypes[] = {"modernbert"};
    static constexpr RefKv kKvs[] = {
        RefKv::rope_freq_base,
        RefKv::rope_freq_base_swa,
        RefKv::rms_epsilon,
        RefKv::sliding_window_or_zero,
        RefKv::sliding_window_pattern,
        RefKv::rope_scaling_type_none,
        RefKv::vocab_size,
        RefKv::hidden_activation,
    };
    static const RefArch kArch{.gguf_arch = "modern-bert",
                               .model_types = kModelTypes,
                               .prepare_config = modernbert_names,
                               .shape = shape,
                               .kvs = kKvs,
                               .encoder = true,
                               .bert_model_class = true,
                               .byte_level_pre = "modern-bert",
                               .encoder_bpe = true};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
