// parse_prune_layers and LayerPruner: llama-quantize's layer list and renumbering.
#include "quantize_file/layer_prune.hpp"

#include <algorithm>
#include <regex>

#include "rebox/error.hpp"

namespace rebox {

std::vector<int> parse_prune_layers(const std::string& text, int n_layer) {
    std::vector<int> layers;
    size_t start = 0;
    while (true) {
        const size_t comma = text.find(',', start);
        const std::string item = text.substr(start, comma - start);
        const bool digits = !item.empty() && item.size() <= 9 &&
                            item.find_first_not_of("0123456789") == std::string::npos;
        if (!digits)
            throw_input_error("--prune-layers", text, "'" + item + "' is not a layer number",
                              "comma-separated layer numbers, e.g. 3,4,7");
        const int layer = std::stoi(item);
        if (layer >= n_layer)
            throw_input_error("--prune-layers", text,
                              "layer " + item + " does not exist (the model has " +
                                  std::to_string(n_layer) + " layers, 0 to " +
                                  std::to_string(n_layer - 1) + ")",
                              "layer numbers of this model");
        layers.push_back(layer);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    std::sort(layers.begin(), layers.end());
    layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
    if (static_cast<int>(layers.size()) >= n_layer)
        throw_input_error("--prune-layers", text, "prunes every layer of the model",
                          "at least one layer kept");
    return layers;
}

std::optional<std::string> LayerPruner::rename(const std::string& name) {
    if (pruned_.empty()) return name;
    static const std::regex layer_pattern(R"(blk\.(\d+)\.)");
    std::smatch match;
    if (!std::regex_search(name, match, layer_pattern)) return name;
    if (match.length(1) > 9)
        throw_input_error(name, "layer number", "too large", "blk.N with N below 10^9");
    const int layer = std::stoi(match[1]);
    if (!mapped_.contains(layer)) {
        if (std::binary_search(pruned_.begin(), pruned_.end(), layer)) {
            mapped_[layer] = std::nullopt;
        } else if (layer < pruned_.front()) {
            mapped_[layer] = layer;
            next_id_ = layer + 1;
        } else {
            mapped_[layer] = next_id_++;
        }
    }
    const std::optional<int>& to = mapped_[layer];
    if (!to) return std::nullopt;
    std::string renamed = name;
    renamed.replace(match.position(1), match.length(1), std::to_string(*to));
    return renamed;
}

}  // namespace rebox
