// olmo2 (OLMo 2, Olmo 3): llama.cpp's olmo2 graph (src/models/olmo2.cpp) as the converter's
// Olmo2Model (conversion/olmo.py; Olmo3ForCausalLM is registered to the same class) writes it:
// NEOX rope (no row permutation); no norm before attention or the feed-forward, one after each
// (post_attention_norm, post_ffw_norm); q/k RMSNorms over the whole projection (heads * head_dim,
// kv_heads * head_dim), not per head; output.weight always (the loader does not tie). KVs:
// TextModel's, then with a sliding_window in config.json (Olmo 3) the window and the per-layer
// pattern (layer_types, else every 4th layer full); Olmo 3's yarn rope_scaling as TextModel writes
// it (type, factor, original context, attention factor, betas).
#include <string>

#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace olmo2_record {

using enum Presence;

constexpr std::string_view kModelTypes[] = {"olmo2", "olmo3"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
// An RMSNorm [width] after a projection or a block.
constexpr TensorSpec olmo_norm(std::string_view hf, std::string_view gguf, Dim width) {
    return {hf, gguf, required, absent, 1, {width}};
}
constexpr auto kLayer = join(
    std::array{attn_q(optional), attn_k(optional), attn_v(optional), attn_output(),
               olmo_norm("self_attn.q_norm", "attn_q_norm", Dim::q_width),
               olmo_norm("self_attn.k_norm", "attn_k_norm", Dim::kv_width), kPostAttentionNorm},
    dense_ffn(), std::array{olmo_norm("post_feedforward_layernorm", "post_ffw_norm", Dim::hidden)});
constexpr TensorSpec kLast[] = {kOutputNorm, output_row(required)};
// TextModel.set_gguf_parameters (key/value length only from a head_dim in config.json), then
// Olmo2Model's sliding window and its per-layer pattern.
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,      ArchKv::embedding_length, ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,       ArchKv::head_count_kv,
    ArchKv::rope_freq_base,      ArchKv::rms_epsilon,      ArchKv::key_length_given,
    ArchKv::value_length_given,  ArchKv::sliding_window,   ArchKv::sliding_window_layers};

// The loader sizes q and the norms from hidden / heads; Olmo2Model writes layer_types as given,
// which llama.cpp's array read refuses unless it has one entry per layer.
void olmo2_checks(const Architecture&, const ModelConfig& config,
                  std::vector<std::string>& problems) {
    if (config.num_attention_heads * config.head_dim != config.hidden_size)
        problems.push_back("num_attention_heads " + std::to_string(config.num_attention_heads) +
                           " * head_dim " + std::to_string(config.head_dim) +
                           " is not hidden_size " + std::to_string(config.hidden_size) +
                           ": llama.cpp's olmo2 graph takes head_dim = hidden_size / heads");
    if (config.sliding_window && !config.layer_types.empty() &&
        config.layer_types.size() != config.num_hidden_layers)
        problems.push_back("config.json layer_types has " +
                           std::to_string(config.layer_types.size()) + " entries for " +
                           std::to_string(config.num_hidden_layers) +
                           " layers: llama.cpp's olmo2 loader needs one per layer");
}

constexpr Architecture kOlmo2 = [] {
    Architecture a{"olmo2", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.config_checks = olmo2_checks;
    a.rope_yarn = true;  // Olmo 3
    // olmo2.cpp passes the output's .scale; build_ffn gets none.
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace olmo2_record

const Architecture& olmo2_architecture() { return olmo2_record::kOlmo2; }

}  // namespace rebox::arch::detail
