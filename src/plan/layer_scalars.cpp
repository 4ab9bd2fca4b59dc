// LayerScalars: per-layer scalar tensors collected into the array KVs the converter writes from
// them (ApertusModel.modify_tensors: each value `.float().item()`, the arrays in layer order).
#include "plan/layer_scalars.hpp"

#include "source/source_values.hpp"

namespace rebox::plan_detail {

LayerScalars::LayerScalars(const arch::Architecture& arch, uint32_t layers)
    : arch_(arch),
      layers_(layers),
      values_(arch.layer_scalar_kvs.size(), std::vector<std::optional<float>>(layers)) {}

void LayerScalars::take(const SourceTensor& tensor, std::pair<size_t, uint32_t> at,
                        std::vector<Blocker>* blockers) {
    const auto [index, layer] = at;
    const std::string key(arch_.layer_scalar_kvs[index].key);
    if (tensor.element_count() != 1)
        return blockers->push_back(Blocker{tensor.name,
                                           "holds " + std::to_string(tensor.element_count()) +
                                               " values; " + key + " takes one number per layer",
                                           "use the checkpoint's own tensor (one value)"});
    if (layer >= layers_)
        return blockers->push_back(
            Blocker{tensor.name,
                    "layer " + std::to_string(layer) +
                        " is beyond config.json num_hidden_layers = " + std::to_string(layers_),
                    "use the config.json that belongs to these weights"});
    std::optional<float>& slot = values_[index][layer];
    if (slot)
        return blockers->push_back(
            Blocker{tensor.name, "a second value for " + key + "[" + std::to_string(layer) + "]",
                    "keep one of the two tensors"});
    float value = 0;
    source_values_f32(tensor, 0, 1, &value);
    slot = value;
}

std::vector<std::pair<std::string, std::vector<float>>> LayerScalars::finish(
    std::vector<Blocker>* blockers) const {
    std::vector<std::pair<std::string, std::vector<float>>> arrays;
    for (size_t index = 0; index < values_.size(); ++index) {
        const arch::LayerScalarKv& kv = arch_.layer_scalar_kvs[index];
        std::string missing;
        std::vector<float> values;
        for (uint32_t layer = 0; layer < layers_; ++layer) {
            if (values_[index][layer])
                values.push_back(*values_[index][layer]);
            else
                missing += (missing.empty() ? "" : ", ") + std::to_string(layer);
        }
        if (!missing.empty()) {
            blockers->push_back(Blocker{
                std::string(kv.key),
                "no layers.N." + std::string(kv.hf) + " for layer(s) " + missing + ": the " +
                    std::string(arch_.gguf_arch) + " graph reads one value per layer",
                "add the missing " + std::string(kv.hf) + " tensors (the checkpoint's own)"});
            continue;
        }
        arrays.emplace_back(std::string(kv.key), std::move(values));
    }
    return arrays;
}

}  // namespace rebox::plan_detail
