// The order llama-quantize writes tensors in: its loader's weights_map, a std::map ordered by
// weight_name_comparer (src/llama-model-loader.h): the "blk.%d." layer number (-1 for tensors
// outside blocks) first, then the names byte by byte. So blk.2 comes before blk.10 and the
// non-block tensors come first, whatever order the input file had.
#pragma once

#include <string>
#include <vector>

namespace rebox {

// sscanf(name, "blk.%d.") as the comparer reads it; -1 when no number follows "blk.".
int llama_layer_of(const std::string& name);
bool llama_weight_name_less(const std::string& a, const std::string& b);
// Indices of `names` in llama's order.
std::vector<size_t> llama_tensor_order(const std::vector<std::string>& names);

}  // namespace rebox
