// apertus (Apertus-8B / -70B): llama.cpp's apertus graph (src/models/apertus.cpp) as the
// converter's ApertusModel writes it (conversion/llama.py: a LlamaModel with undo_permute off):
// NEOX rope, so no q/k row permutation; attention_layernorm / feedforward_layernorm as attn_norm /
// ffn_norm; per-head q/k RMSNorms; up and down projections only (xIELU, no gate); output always
// written (the loader does not tie); LlamaModel's KVs (vocab_size, rope.dimension_count; key/value
// length only from a head_dim in config.json) and llama3 rope_freqs. Each layer's xIELU
// parameters (mlp.act_fn.alpha_n, alpha_p, beta, eps: one number each) are no tensor: the
// converter collects them into the FLOAT32 arrays xielu.alpha_n ... xielu.eps (keys without the
// arch prefix), one value per layer, which the graph reads.
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace apertus_record {

using enum Presence;

constexpr std::string_view kModelTypes[] = {"apertus"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr TensorSpec kAttentionNorm{"attention_layernorm", "attn_norm", required, absent, 1,
                                    {Dim::hidden}};
constexpr TensorSpec kFeedForwardNorm{
    "feedforward_layernorm", "ffn_norm", required, absent, 1, {Dim::hidden}};
// The loader: optional q/k/v/o biases, q/k norms [head_dim], up and down without bias.
constexpr std::array<TensorSpec, 10> kLayer{{
    kAttentionNorm,
    attn_q(optional),
    attn_k(optional),
    attn_v(optional),
    attn_output(optional),
    attn_q_norm(),
    attn_k_norm(),
    kFeedForwardNorm,
    {"mlp.up_proj", "ffn_up", required, absent, 2, {Dim::hidden, Dim::ffn}},
    {"mlp.down_proj", "ffn_down", required, absent, 2, {Dim::ffn, Dim::hidden}},
}};
constexpr TensorSpec kLast[] = {kOutputNorm, output_row(required)};
// TextModel.set_gguf_parameters (key/value length only from a head_dim in config.json), then
// LlamaModel's vocab_size and rope.dimension_count.
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,      ArchKv::embedding_length, ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,       ArchKv::head_count_kv,
    ArchKv::rope_freq_base,      ArchKv::rms_epsilon,      ArchKv::key_length_given,
    ArchKv::value_length_given,  ArchKv::vocab_size,       ArchKv::rope_dimension_count};
constexpr ExtraTensor kExtras[] = {ExtraTensor::rope_freqs_llama3};
// ApertusModel.modify_tensors: each layer's scalar, in the order the arrays are completed.
constexpr LayerScalarKv kXielu[] = {{"mlp.act_fn.alpha_n", "xielu.alpha_n"},
                                    {"mlp.act_fn.alpha_p", "xielu.alpha_p"},
                                    {"mlp.act_fn.beta", "xielu.beta"},
                                    {"mlp.act_fn.eps", "xielu.eps"}};

constexpr Architecture kApertus = [] {
    Architecture a{"apertus", kModelTypes, kFirst, kLayer, kLast, kKvs, kExtras};
    a.layer_scalar_kvs = kXielu;
    // apertus.cpp passes the output's .scale; the up / down projections get none.
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace apertus_record

const Architecture& apertus_architecture() { return apertus_record::kApertus; }

}  // namespace rebox::arch::detail
