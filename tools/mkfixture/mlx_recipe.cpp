// The recipes (docs/formats.md, "Recipes"): mixed_x_y (mixed_3_4, mixed_4_6 as in mlx-lm;
// mixed_4_5 built the same way, mlx-lm has no 4/5 one) gives high bits to v_proj and down_proj in
// layers with use_more_bits and to lm_head, low bits elsewhere (embedding included), and, like
// mlx-lm, lists every quantized module as an override. dynamic_4_5 gives 5 bits to q_proj and
// gate_proj of use_more_bits layers and lists only those (the rest use the global 4/64).
// uniform4_float_down0 is uniform4 with layer 0's down_proj left unquantized (a BF16 weight, listed
// as false), as mlx-lm leaves modules its quant predicate skips.
#include "mlx_recipe.hpp"

#include <stdexcept>

namespace mkfixture {

namespace {

// Layer index of "model.layers.N.…", or -1.
int64_t layer_of(const std::string& name) {
    const std::string key = "layers.";
    const size_t at = name.find(key);
    if (at == std::string::npos) return -1;
    return std::stoll(name.substr(at + key.size()));
}

bool contains(const std::string& text, const char* part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

const std::vector<std::string>& mlx_recipe_names() {
    static const std::vector<std::string> names = {
        "uniform4", "mixed_3_4", "mixed_4_5", "mixed_4_6", "dynamic_4_5", "uniform4_float_down0"};
    return names;
}

bool mlx_use_more_bits(int64_t i, int64_t n) {
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

std::map<std::string, std::pair<int, int>> apply_mlx_recipe(ModelPlan& plan,
                                                            const std::string& recipe) {
    std::map<std::string, std::pair<int, int>> overrides;
    const int64_t layers = plan.dims.layers;
    int low = kMlxGlobalBits, high = kMlxGlobalBits;
    const bool mixed = recipe == "mixed_3_4" || recipe == "mixed_4_5" || recipe == "mixed_4_6";
    if (recipe == "mixed_3_4") {
        low = 3, high = 4;
    } else if (recipe == "mixed_4_5") {
        low = 4, high = 5;
    } else if (recipe == "mixed_4_6") {
        low = 4, high = 6;
    } else if (recipe != "uniform4" && recipe != "dynamic_4_5" &&
               recipe != "uniform4_float_down0") {
        throw std::runtime_error("--recipe: unknown recipe '" + recipe + "'");
    }
    for (PlanUnit& unit : plan.units) {
        if (!unit.quantized) continue;
        QuantTensor& q = unit.quant;
        const std::string& name = q.name;
        const int64_t layer = layer_of(name);
        const bool more = layer >= 0 && mlx_use_more_bits(layer, layers);
        int bits = kMlxGlobalBits;
        bool listed = false;
        if (mixed) {
            const bool high_tensor =
                contains(name, "lm_head") ||
                (more && (contains(name, "v_proj") || contains(name, "down_proj")));
            bits = high_tensor ? high : low;
            listed = true;
        } else if (recipe == "dynamic_4_5" && more &&
                   (contains(name, "q_proj") || contains(name, "gate_proj"))) {
            bits = 5;
            listed = true;
        }
        // mlx-lm's qwen MoE quant predicate keeps the router and the shared-expert gate at 8 bits.
        const bool qwen_router =
            name.ends_with("mlp.gate.weight") || name.ends_with("mlp.shared_expert_gate.weight");
        if (qwen_router) {
            bits = 8;
            listed = true;
        }
        q.bits = q.meta_bits = bits;
        q.group = q.meta_group = kMlxGlobalGroup;
        if (recipe == "uniform4_float_down0" && layer == 0 && contains(name, "down_proj")) {
            q.mlx_float = true;  // listed as false, as mlx-lm does for a module its predicate skips
            overrides[name.substr(0, name.size() - std::string(".weight").size())] = {0, 0};
            continue;
        }
        if (listed) {
            const std::string module = name.substr(0, name.size() - std::string(".weight").size());
            overrides[module] = {bits, kMlxGlobalGroup};
        }
    }
    return overrides;
}

}  // namespace mkfixture
