// llama (Llama 1-3.x, Mistral, SmolLM, R1-Distill-Llama): llama.cpp's llama graph
// (docs/architectures.md). NORM rope: the q/k rows of every head are permuted from HF's
// half-split order to llama.cpp's interleaved pairs (LlamaModel.permute), biases included; llama3
// rope scaling adds rope_freqs.weight; head_dim may differ from hidden/heads (Mistral-Nemo).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace llama_record {

using enum Presence;

constexpr std::string_view kModelTypes[] = {"llama", "mistral"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
// llama.cpp's llama loader takes optional biases on q/k/v/o and the feed-forward projections.
constexpr auto kLayer = join(kLlamaAttention, dense_ffn(optional));
constexpr TensorSpec kLast[] = {kOutputNorm, output_row()};
// LlamaModel.set_gguf_parameters adds vocab_size and rope.dimension_count (= head_dim).
constexpr auto kKvs = join(kDecoderKvs, std::array{ArchKv::vocab_size});
constexpr ExtraTensor kExtras[] = {ExtraTensor::rope_freqs_llama3};

constexpr Architecture kLlama = [] {
    Architecture a{"llama", kModelTypes, kFirst, kLayer, kLast, kKvs, kExtras};
    // llama.cpp's llama graph passes the .scale of output, the dense FFN and the experts.
    a.nvfp4_scales = {.output = true, .dense_ffn = true, .experts = true};
    return a;
}();

}  // namespace llama_record

const Architecture& llama_architecture() { return llama_record::kLlama; }

}  // namespace rebox::arch::detail
