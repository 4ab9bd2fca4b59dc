// Per-layer scalar source tensors as the array KVs llama.cpp's converter builds from them
// (ApertusModel.modify_tensors: `.float().item()` of each, the arrays in layer order).
#include "verify/values/ref_layer_scalars.hpp"

#include <charconv>
#include <span>

#include "verify/values/ref_expected.hpp"

namespace rebox::verify_ref {

std::optional<std::pair<size_t, uint32_t>> match_ref_layer_scalar(const RefArch& arch,
                                                                  std::string_view name) {
    for (const std::string_view prefix : {"model.", "language_model."})
        if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
    constexpr std::string_view kLayers = "layers.";
    if (!name.starts_with(kLayers)) return std::nullopt;
    name.remove_prefix(kLayers.size());
    const size_t dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0 || (dot > 1 && name[0] == '0'))
        return std::nullopt;
    uint32_t layer = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, layer);
    if (ec != std::errc() || end != name.data() + dot) return std::nullopt;
    const std::string_view rest = name.substr(dot + 1);
    for (size_t i = 0; i < arch.layer_scalars.size(); ++i)
        if (arch.layer_scalars[i].hf == rest) return std::pair{i, layer};
    return std::nullopt;
}

std::vector<RefLayerScalarKv> expected_layer_scalars(const RefArch& arch, uint32_t layers,
                                                     const SourceIndex& index,
                                                     std::vector<std::string>& problems) {
    std::vector<RefLayerScalarKv> arrays;
    for (const RefLayerScalar& scalar : arch.layer_scalars)
        arrays.push_back({std::string(scalar.key), std::vector<std::optional<float>>(layers)});
    for (const SourceTensor& entry : index.entries) {
        const auto match = match_ref_layer_scalar(arch, entry.name);
        if (!match || match->second >= layers) continue;
        RefLayerScalarKv& array = arrays[match->first];
        float value = 0;
        if (entry.element_count != 1 || !entry.problem.empty() || entry.prequant || entry.fp4 ||
            entry.fp8 || entry.deinterleave != 0) {
            problems.push_back(entry.name + ": " + array.key +
                               " takes this tensor's one value; verify cannot read one from it");
            continue;
        }
        if (entry.quantized) {
            uint8_t code = 0;
            expected_from_quantized(entry.quant, 0, std::span<uint8_t>(&code, 1),
                                    std::span<float>(&value, 1));
        } else {
            expected_from_float(entry.float_dtype, entry.float_data, 0,
                                std::span<float>(&value, 1));
        }
        array.values[match->second] = value;
    }
    return arrays;
}

}  // namespace rebox::verify_ref
