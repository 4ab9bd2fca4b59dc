// check_config_caps() / check_config_against_tensors(): every count config.json gives, checked
// before the plan or verify sizes a table, a name list or a computed tensor from it.
#include "model/config_bounds.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "rebox/error.hpp"

namespace rebox {
namespace {

constexpr const char* kFile = "config.json";
constexpr const char* kFix = "use the config.json that belongs to these weights";

// The caps: each far above any published model, and small enough that what is sized from it stays
// small (README "Limits against hostile files").
constexpr uint64_t kMaxLayers = 4096;              // deepest published: ~130
constexpr uint64_t kMaxHeads = 65536;              // attention and key/value heads
constexpr uint64_t kMaxHeadDim = 65536;            // llama3 rope_freqs holds head_dim / 2 floats
constexpr uint64_t kMaxWidth = uint64_t{1} << 24;  // hidden and intermediate sizes
constexpr uint64_t kMaxVocab = uint64_t{1} << 24;  // as tokenizer.json's 16 Mi tokens
constexpr uint64_t kMaxExperts = 65536;
constexpr uint64_t kMaxPositions = uint64_t{1} << 30;
// A head size, vocabulary or expert count up to this sizes only small tables, whatever the tensors
// (a partial checkpoint without an embedding still plans and reports what is missing).
constexpr uint64_t kSmallCount = 4096;

// How a count is held against the tensors: the number of tensors (a layer has at least one), the
// largest dimension (a table or computed tensor sized by it is at most a tensor's size), the larger
// of both (experts: one tensor each, or stacked along a dimension), or not at all (widths and head
// counts size nothing; the plan's shape check holds them against each tensor it maps).
enum class Bound { tensor_count, largest_dim, either, none };

struct Count {
    const char* key;
    std::optional<uint64_t> value;
    uint64_t cap;
    Bound bound;
};

std::vector<Count> counts(const ModelConfig& c) {
    const auto opt = [](const std::optional<uint32_t>& v) -> std::optional<uint64_t> {
        if (v) return *v;
        return std::nullopt;
    };
    const auto nonzero = [](uint32_t v) -> std::optional<uint64_t> {
        if (v == 0) return std::nullopt;
        return v;
    };
    return {
        {"num_hidden_layers", c.num_hidden_layers, kMaxLayers, Bound::tensor_count},
        {"num_attention_heads", c.num_attention_heads, kMaxHeads, Bound::none},
        {"num_key_value_heads", c.num_key_value_heads, kMaxHeads, Bound::none},
        {"head_dim", c.head_dim, kMaxHeadDim, Bound::largest_dim},
        {"hidden_size", c.hidden_size, kMaxWidth, Bound::none},
        {"intermediate_size", c.intermediate_size, kMaxWidth, Bound::none},
        {"moe_intermediate_size", opt(c.moe_intermediate_size), kMaxWidth, Bound::none},
        {"shared_expert_intermediate_size", opt(c.shared_expert_intermediate_size), kMaxWidth,
         Bound::none},
        {"vocab_size", c.vocab_size, kMaxVocab, Bound::largest_dim},
        {"num_experts", nonzero(c.num_experts), kMaxExperts, Bound::either},
        {"num_experts_per_tok", nonzero(c.num_experts_per_tok), kMaxExperts, Bound::either},
    };
}

}  // namespace

TensorBounds tensor_bounds(std::span<const std::vector<int64_t>> shapes) {
    TensorBounds bounds;
    bounds.tensor_count = shapes.size();
    for (const auto& shape : shapes)
        for (const int64_t dim : shape)
            if (dim > 0) bounds.largest_dim = std::max(bounds.largest_dim, uint64_t(dim));
    return bounds;
}

void check_config_caps(const ModelConfig& config) {
    for (const Count& count : counts(config))
        if (count.value && *count.value > count.cap)
            throw_input_error(kFile, count.key,
                              std::to_string(*count.value) +
                                  " is beyond rebox's cap (no real model comes near it)",
                              "at most " + std::to_string(count.cap));
    if (config.max_position_embeddings > kMaxPositions)
        throw_input_error(kFile, "max_position_embeddings",
                          std::to_string(config.max_position_embeddings) +
                              " is beyond rebox's cap (no real model comes near it)",
                          "at most " + std::to_string(kMaxPositions));
}

void check_config_against_tensors(const ModelConfig& config, const TensorBounds& bounds) {
    for (const Count& count : counts(config)) {
        if (!count.value || count.bound == Bound::none) continue;
        const uint64_t bound = count.bound == Bound::tensor_count ? bounds.tensor_count
                               : count.bound == Bound::largest_dim
                                   ? bounds.largest_dim
                                   : std::max(bounds.tensor_count, bounds.largest_dim);
        if (*count.value <= bound) continue;
        if (count.bound != Bound::tensor_count && *count.value <= kSmallCount) continue;
        const std::string what =
            count.bound == Bound::tensor_count
                ? "the checkpoint has only " + std::to_string(bounds.tensor_count) +
                      " tensors (every layer has at least one)"
                : "no tensor of the checkpoint has a dimension that large (the largest is " +
                      std::to_string(bounds.largest_dim) + ")";
        throw_input_error(kFile, count.key,
                          std::to_string(*count.value) + " does not fit the weights: " + what,
                          "at most " + std::to_string(bound) + "; " + kFix);
    }
}

}  // namespace rebox
