// llama (Llama 1-3.x, Mistral, SmolLM, R1-Distill-Llama): llama.cpp's llama graph
// (docs/architectures.md). NORM rope: the q/k rows of every head are permuted from HF's
// half-split order to llama.cpp's interleaved pairs (LlamaModel.permute), biases included; llama3
// rope scaling adds rope_freqs.weight; head_dim may differ from hidden/heads (Mistral-Nemo).
#include "llama_rows.hpp"

namespace rebox::arch::detail {
namespace {

using enum Dim;
using enum Presence;

constexpr std::string_view kModelTypes[] = {"llama", "mistral"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
// llama.cpp's llama loader takes optional biases on q/k/v/o and the feed-forward projections.
constexpr TensorSpec kLayer[] = {
    kLlamaAttnNorm,
    kLlamaAttnQ,
    kLlamaAttnK,
    kLlamaAttnV,
    kLlamaAttnOut,
    kLlamaFfnNorm,
    {"mlp.gate_proj", "ffn_gate", required, optional, 2, {hidden, ffn}},
    {"mlp.up_proj", "ffn_up", required, optional, 2, {hidden, ffn}},
    {"mlp.down_proj", "ffn_down", required, optional, 2, {ffn, hidden}},
};
constexpr TensorSpec kLast[] = {
    kOutputNorm,
    {"lm_head", "output", required_unless_tied, absent, 2, {hidden, vocab}},
};
// LlamaModel.set_gguf_parameters adds vocab_size and rope.dimension_count (= head_dim).
constexpr ArchKv kKvs[] = {
    ArchKv::context_length,      ArchKv::embedding_length,     ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,           ArchKv::head_count_kv,
    ArchKv::rope_freq_base,      ArchKv::rms_epsilon,          ArchKv::key_length,
    ArchKv::value_length,        ArchKv::rope_dimension_count, ArchKv::vocab_size,
};
constexpr ExtraTensor kExtras[] = {ExtraTensor::rope_freqs_llama3};

constexpr Architecture kLlama{"llama", kModelTypes, kFirst, kLayer, kLast, kKvs, kExtras};

}  // namespace

const Architecture& llama_architecture() { return kLlama; }

}  // namespace rebox::arch::detail
