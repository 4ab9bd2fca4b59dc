// The shape each Hugging Face tensor of a model must have, derived from config.json alone. This
// breaks the circle "metadata says shape S, converter wrote S, verify reads S": a source whose mcq
// metadata lies about bits/group/rows still has to match the architecture.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "verify/sources/ref_config.hpp"

namespace rebox::verify_ref {

// HF order shape for an unprefixed HF name ("layers.3.self_attn.q_proj.weight"); nullopt for names
// this table does not know (then only the source/GGUF agreement is checked) or a layer index
// >= num_hidden_layers (reported by the caller as out of range via layer_in_range).
std::optional<std::vector<int64_t>> expected_hf_shape(const RefConfig& config,
                                                      std::string_view hf_name);

// A mixture-of-experts tensor's shape from the part after "layers.N." (qwen3_moe, qwen2_moe:
// mlp.gate, mlp.shared_expert*, mlp.experts.{e}.*, MLX's mlp.switch_mlp.*; mixtral:
// block_sparse_moe.*), HF order; nullopt for other names.
std::optional<std::vector<int64_t>> expected_moe_shape(const RefConfig& c, std::string_view rest);

// True when the name is "layers.N...." with N >= layers.
bool hf_layer_at_or_past(std::string_view hf_name, uint64_t layers);

// False when the name is "layers.N...." with N >= num_hidden_layers.
bool layer_in_range(const RefConfig& config, std::string_view hf_name);

}  // namespace rebox::verify_ref
