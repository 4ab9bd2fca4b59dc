// mlx-vlm's names and patch embedding layout (see mlx_vlm_layout.hpp).
#include "mlx_vlm_layout.hpp"

#include <stdexcept>
#include <string_view>

namespace mkfixture {
namespace {

// The published name (either layout the fixture writes) as mlx-vlm's sanitize saves it.
std::string mlx_vlm_name(const std::string& name) {
    const auto swap = [&](std::string_view from, std::string_view to) -> std::string {
        return std::string(to) + name.substr(from.size());
    };
    for (const auto& [from, to] : {std::pair<std::string_view, std::string_view>{
                                       "model.language_model.", "language_model.model."},
                                   {"model.visual.", "vision_tower."},
                                   {"visual.", "vision_tower."},
                                   {"model.", "language_model.model."},
                                   {"lm_head.", "language_model.lm_head."}})
        if (name.starts_with(from)) return swap(from, to);
    if (name.starts_with("vision_tower.") || name.starts_with("language_model.")) return name;
    throw std::runtime_error("--mlx-vlm: no mlx-vlm name for " + name);
}

}  // namespace

void apply_mlx_vlm_layout(ModelPlan& plan, std::map<std::string, std::pair<int, int>>& overrides,
                          bool quantized_tower) {
    for (PlanUnit& unit : plan.units) {
        std::string& name = unit.quantized ? unit.quant.name : unit.norm.name;
        name = mlx_vlm_name(name);
        if (!unit.quantized && name.ends_with("patch_embed.proj.weight")) {
            std::vector<int64_t>& d = unit.norm.dims;
            if (d.size() != 5)
                throw std::runtime_error("--mlx-vlm: the patch embedding is not 5-D");
            d = {d[0], d[2], d[3], d[4], d[1]};  // transpose(0, 2, 3, 4, 1)
        }
    }
    if (quantized_tower)
        for (PlanUnit& unit : plan.units) {
            const NormTensor& t = unit.norm;
            if (unit.quantized || !t.name.starts_with("vision_tower.") ||
                !t.name.ends_with(".weight") || t.dims.size() != 2 || t.dims[1] % 32 != 0)
                continue;
            const std::string name = t.name;
            unit = quant_unit(name, t.dims[0], t.dims[1], {4, 32});
            overrides[name.substr(0, name.size() - 7)] = {4, 32};
        }
    std::map<std::string, std::pair<int, int>> renamed;
    for (const auto& [path, quant] : overrides) renamed[mlx_vlm_name(path + ".")] = quant;
    overrides.clear();
    for (auto& [path, quant] : renamed) overrides[path.substr(0, path.size() - 1)] = quant;
}

}  // namespace mkfixture
