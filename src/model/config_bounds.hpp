// The counts of config.json held against sane caps and against the tensors actually present,
// before anything is sized from them: a hostile or mismatched config.json (num_hidden_layers 1e9,
// a huge num_experts or head_dim) fails in one line naming the key instead of allocating for it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model_config.hpp"

namespace rebox {

// What stock llama.cpp loads at most (llama-hparams.h LLAMA_MAX_LAYERS, LLAMA_MAX_EXPERTS): a model
// beyond them converts exactly, but llama.cpp asserts and aborts when it loads the file.
inline constexpr uint32_t kLlamaMaxLayers = 512;
inline constexpr uint32_t kLlamaMaxExperts = 1024;

// What the checkpoint's tensors allow: their count and their largest logical dimension (a layer has
// at least one tensor; a head size, vocabulary or expert count is at most the largest dimension of
// some tensor, or for experts stored one per tensor, the tensor count).
struct TensorBounds {
    uint64_t tensor_count = 0;
    uint64_t largest_dim = 0;
};

// The bounds of a set of logical shapes.
TensorBounds tensor_bounds(std::span<const std::vector<int64_t>> shapes);

// Absolute caps, whatever the tensors (parse_model_config applies them): throws an input-class
// rebox::Error "config.json: KEY: VALUE is more than CAP ...".
void check_config_caps(const ModelConfig& config);

// The counts that size a table, a name list or a computed tensor (num_hidden_layers, head_dim,
// vocab_size, num_experts, num_experts_per_tok) against the tensors: throws an input-class
// rebox::Error naming the key and the checkpoint's bound. Widths and head counts size nothing; the
// plan holds them against each tensor's shape (BLOCKERs).
void check_config_against_tensors(const ModelConfig& config, const TensorBounds& bounds);

}  // namespace rebox
