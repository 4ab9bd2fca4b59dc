// Per-layer scalar source tensors that llama.cpp's converter turns into FLOAT32 array KVs, one
// entry per layer (apertus' xIELU parameters: layers.N.mlp.act_fn.alpha_n -> xielu.alpha_n[N]),
// instead of writing them as tensors (layer_scalars.cpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arch/architecture.hpp"
#include "rebox/error.hpp"
#include "source/source_model.hpp"

namespace rebox::plan_detail {

// The values gathered so far: [the architecture's layer_scalar_kvs index][layer].
class LayerScalars {
  public:
    LayerScalars(const arch::Architecture& arch, uint32_t layers);
    // Takes the one value of `tensor` (at = match_layer_scalar's key index and layer), exactly as
    // its binary32 value (dequantized, or widened); a BLOCKER for a tensor of more than one value,
    // a layer past num_hidden_layers, or a second tensor for the same entry.
    void take(const SourceTensor& tensor, std::pair<size_t, uint32_t> at,
              std::vector<Blocker>* blockers);
    // The arrays in the record's order, or one BLOCKER per key some layer has no value for.
    std::vector<std::pair<std::string, std::vector<float>>> finish(
        std::vector<Blocker>* blockers) const;

  private:
    const arch::Architecture& arch_;
    uint32_t layers_;
    std::vector<std::vector<std::optional<float>>> values_;
};

}  // namespace rebox::plan_detail
