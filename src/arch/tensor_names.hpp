// Hugging Face tensor names <-> llama.cpp GGUF tensor names (docs/gguf.md §4.1), with and without
// the "model." prefix; lm_head -> output. The inverse map is used by verify.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rebox {

// "layers.3.self_attn.q_proj.weight" or "model.layers.3.self_attn.q_proj.weight" ->
// "blk.3.attn_q.weight". nullopt when the name has no mapping for this architecture (a BLOCKER,
// never skipped).
std::optional<std::string> gguf_tensor_name(std::string_view arch, std::string_view hf_name,
                                            uint32_t main_layers = 0);

// "blk.3.attn_q.weight" -> "layers.3.self_attn.q_proj.weight" (unprefixed canonical HF name).
// Callers match it against source names with or without the "model." prefix.
std::optional<std::string> hf_tensor_name(std::string_view arch, std::string_view gguf_name,
                                          uint32_t main_layers = 0);

// The HF name without a leading "model." (so both naming styles compare equal).
std::string strip_model_prefix(std::string_view hf_name);

// A config.json model_type (or GGUF architecture) the registry knows.
bool is_supported_arch(std::string_view model_type);

}  // namespace rebox
