// llama's weight_name_comparer order.
#include "recipe/llama_tensor_order.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace rebox {

int llama_layer_of(const std::string& name) {
    int layer = -1;
    // The comparer's own call, so that its reading of signs, spaces and overflow is llama's.
    if (std::sscanf(name.c_str(), "blk.%d.", &layer) != 1) layer = -1;
    return layer;
}

bool llama_weight_name_less(const std::string& a, const std::string& b) {
    const int layer_a = llama_layer_of(a);
    const int layer_b = llama_layer_of(b);
    if (layer_a != layer_b) return layer_a < layer_b;
    return a < b;
}

std::vector<size_t> llama_tensor_order(const std::vector<std::string>& names) {
    std::vector<size_t> order(names.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return llama_weight_name_less(names[a], names[b]);
    });
    return order;
}

}  // namespace rebox
