// --prune-layers L0,L1,... as llama-quantize v0.4.0 reads and applies it (src/llama-quant.cpp
// remap_layer): the listed blk.N layers are dropped and the ones after them renumbered, visiting
// the tensors in llama's order; {arch}.block_count becomes the next free layer number.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rebox {

// Sorted, without duplicates. Throws Error (input class) for an empty list or an item that is not
// a decimal layer number below n_layer (llama-quantize reads "3x" as 3 and ignores numbers past
// the last layer), and for a list that names every layer.
std::vector<int> parse_prune_layers(const std::string& text, int n_layer);

// Renames tensor names in llama's tensor order, as remap_layer: a name holding "blk.N." keeps N
// below the first pruned layer, is dropped (nullopt) when N is pruned, and otherwise takes the
// next free number, in the order the layers are first met.
class LayerPruner {
  public:
    explicit LayerPruner(std::vector<int> pruned) : pruned_(std::move(pruned)) {}
    std::optional<std::string> rename(const std::string& name);
    int block_count() const { return next_id_; }  // after every name was renamed

  private:
    std::vector<int> pruned_;
    std::map<int, std::optional<int>> mapped_;
    int next_id_ = 0;
};

}  // namespace rebox
