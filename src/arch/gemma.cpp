// gemma (Gemma 1): llama.cpp's gemma graph (docs/architectures.md "gemma"). Every RMSNorm weight
// is written as weight + 1 in F32 (GemmaModel.modify_tensors); the output is always tied to
// token_embd (llama.cpp's gemma loader has no output.weight, the converter drops lm_head); the
// converter writes no rope.freq_base (the loader's default 10000 is Gemma's theta).
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace gemma_record {

constexpr std::string_view kModelTypes[] = {"gemma"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(std::array{kGemmaAttnNorm, attn_q(), attn_k(), attn_v(), attn_output(),
                                        gemma_norm("post_attention_layernorm", "ffn_norm")},
                             dense_ffn());
constexpr TensorSpec kLast[] = {kGemmaOutputNorm};
// GemmaModel.set_gguf_parameters, in its order.
constexpr auto kKvs = kGemmaKvs;

constexpr Architecture kGemma = [] {
    Architecture a{"gemma", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace gemma_record

const Architecture& gemma_architecture() { return gemma_record::kGemma; }

}  // namespace rebox::arch::detail
