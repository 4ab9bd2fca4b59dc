// What the DeepSeek-style MoE families (glm4moe, deepseek2) read from config.json alike
// (arch_tables.hpp take_routed_experts, read_moe_routing), as TextModel.set_gguf_parameters and
// their converter classes read it.
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace deepseek_moe {

// TextModel's score-function keys (find_hparam's order).
constexpr const char* kScoreFunctionKeys[] = {"score_function",
                                              "scoring_func",
                                              "score_func",
                                              "moe_router_activation",
                                              "moe_router_activation_func",
                                              "expert_selection_fn"};

}  // namespace deepseek_moe

const nlohmann::json* config_field(const nlohmann::json& root, const char* name) {
    const auto it = root.find(name);
    return it == root.end() || it->is_null() ? nullptr : &*it;
}

std::string_view first_architecture(const nlohmann::json& root) {
    const auto archs = root.find("architectures");
    if (archs == root.end() || !archs->is_array() || archs->empty() || !archs->front().is_string())
        return {};
    return archs->front().get_ref<const std::string&>();
}

std::optional<uint32_t> config_count(const nlohmann::json& root, const char* name, uint32_t low,
                                     uint32_t cap) {
    const nlohmann::json* value = config_field(root, name);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number_unsigned() || value->get<uint64_t>() < low ||
        value->get<uint64_t>() > cap)
        throw_input_error(
            "config.json", name, "is " + value->dump(),
            "a whole number from " + std::to_string(low) + " to " + std::to_string(cap));
    return static_cast<uint32_t>(value->get<uint64_t>());
}

void take_routed_experts(nlohmann::json& root, const char* expected) {
    const nlohmann::json* routed = config_field(root, "n_routed_experts");
    if (routed == nullptr)
        throw_input_error("config.json", "n_routed_experts", "missing", expected);
    root["num_experts"] = *routed;
    root.erase("num_local_experts");
}

std::string read_moe_routing(const nlohmann::json& root, ModelConfig& config) {
    constexpr uint32_t kCap = 1u << 16;
    config.n_shared_experts = config_count(root, "n_shared_experts", 0, 64);
    config.leading_dense_blocks = config_count(root, "first_k_dense_replace", 0, kCap);
    config.expert_group_count = config_count(root, "n_group", 0, kCap);
    config.expert_group_used_count = config_count(root, "topk_group", 0, kCap);
    if (const nlohmann::json* scale = config_field(root, "routed_scaling_factor")) {
        if (!scale->is_number())
            throw_input_error("config.json", "routed_scaling_factor", "is " + scale->dump(),
                              "a number");
        config.expert_weights_scale = scale->get<float>();
    }
    if (const nlohmann::json* norm = config_field(root, "norm_topk_prob")) {
        if (!norm->is_boolean())
            throw_input_error("config.json", "norm_topk_prob", "is " + norm->dump(),
                              "true or false");
        config.expert_weights_norm = norm->get<bool>();
    }
    for (const char* key : deepseek_moe::kScoreFunctionKeys) {
        const nlohmann::json* value = config_field(root, key);
        if (value == nullptr) continue;
        if (*value != "sigmoid" && *value != "softmax" && *value != "sqrtsoftplus")
            throw_input_error("config.json", key, "is " + value->dump(),
                              "sigmoid, softmax or sqrtsoftplus (llama.cpp's converter raises)");
        return value->get<std::string>();
    }
    return "";
}

}  // namespace rebox::arch::detail
