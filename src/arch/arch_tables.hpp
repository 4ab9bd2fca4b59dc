// The per-architecture tables (one .cpp each) the registry lists, and the table rows every
// decoder-only llama-like architecture shares.
#pragma once

#include "arch/architecture.hpp"

namespace rebox::arch::detail {

const Architecture& qwen3_architecture();
const Architecture& qwen2_architecture();
const Architecture& llama_architecture();
const Architecture& qwen3_moe_architecture();
const Architecture& qwen2_moe_architecture();
const Architecture& mixtral_architecture();
const Architecture& phi3_architecture();
const Architecture& gemma_architecture();
const Architecture& gemma2_architecture();
const Architecture& gemma3_architecture();

// token_embd.weight [E, V]: before the layers.
inline constexpr TensorSpec kTokenEmbd{
    "embed_tokens",           "token_embd", Presence::required, Presence::absent, 2,
    {Dim::hidden, Dim::vocab}};
// output_norm.weight [E].
inline constexpr TensorSpec kOutputNorm{"norm", "output_norm", Presence::required, Presence::absent,
                                        1,      {Dim::hidden}};
// gemma's output_norm.weight [E]: written as weight + 1 (docs/architectures.md "gemma").
inline constexpr TensorSpec kGemmaOutputNorm{
    "norm", "output_norm",          Presence::required, Presence::absent,
    1,      {Dim::hidden},          RowTransform::none, SourceRole::plain,
    {},     ValueTransform::add_one};

}  // namespace rebox::arch::detail
