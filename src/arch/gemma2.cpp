// gemma2 (Gemma 2): llama.cpp's gemma2 graph (docs/architectures.md "gemma"). Four RMSNorms per
// layer (attention in/out, feed-forward in/out), each written as weight + 1 in F32
// (Gemma2Model.modify_tensors); output tied to token_embd (no output.weight in the loader); the
// attention/final logit softcapping and sliding_window KVs.
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace gemma2_record {

constexpr std::string_view kModelTypes[] = {"gemma2"};
constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer =
    join(std::array{kGemmaAttnNorm, attn_q(), attn_k(), attn_v(), attn_output()}, kGemma2Ffn);
constexpr TensorSpec kLast[] = {kGemmaOutputNorm};
// Gemma2Model.set_gguf_parameters, in its order: gemma's keys, then the softcappings and the
// sliding window.
constexpr auto kKvs =
    join(kGemmaKvs, std::array{ArchKv::attn_logit_softcapping, ArchKv::final_logit_softcapping,
                               ArchKv::sliding_window});

constexpr Architecture kGemma2 = [] {
    Architecture a{"gemma2", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace gemma2_record

const Architecture& gemma2_architecture() { return gemma2_record::kGemma2; }

}  // namespace rebox::arch::detail
