// What llama.cpp's graph for an architecture loads (notes/gguf.md §3.2): the tensors it requires,
// the ne each must have given config.json, and the order rebox writes them in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rebox/model/model_config.hpp"

namespace rebox::plan_detail {

// The ne (ggml order) llama.cpp expects for `gguf_name`, or nullopt when the architecture's graph
// has no such tensor (llama.cpp refuses files with extra tensors).
std::optional<std::vector<int64_t>> expected_ne(std::string_view arch, const ModelConfig& config,
                                                std::string_view gguf_name);

// Every tensor the graph requires for this config (output.weight only when embeddings are untied).
std::vector<std::string> required_tensors(std::string_view arch, const ModelConfig& config);

// Sort key: token_embd first, then layer by layer in §3.2 order, output_norm and output last.
std::pair<int64_t, int> output_rank(std::string_view gguf_name);

// The layer index of "blk.N.*", or nullopt.
std::optional<int64_t> layer_of(std::string_view gguf_name);

}  // namespace rebox::plan_detail
