// What verify's records of the DeepSeek-style MoE families (glm4moe, deepseek2) read alike
// (ref_arch.hpp): config.json's routing fields, as TextModel and their converter classes read
// them, the layer index of an HF name, and the shapes of the MoE part of a layer.
#include <string>

#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref {

const nlohmann::json* ref_field(const nlohmann::json& root, const char* key) {
    const auto it = root.find(key);
    return it == root.end() || it->is_null() ? nullptr : &*it;
}

std::string_view ref_first_architecture(const nlohmann::json& root) {
    const auto archs = root.find("architectures");
    if (archs == root.end() || !archs->is_array() || archs->empty() || !archs->front().is_string())
        return {};
    return archs->front().get_ref<const std::string&>();
}

std::optional<uint32_t> ref_count(const nlohmann::json& root, const char* key, uint32_t cap,
                                  uint32_t low) {
    const nlohmann::json* value = ref_field(root, key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number_integer() || value->get<int64_t>() < low || value->get<int64_t>() > cap)
        throw_input_error(
            "config.json", key, "is " + value->dump(),
            "a whole number from " + std::to_string(low) + " to " + std::to_string(cap));
    return static_cast<uint32_t>(value->get<int64_t>());
}

bool ref_layer(std::string_view name, uint64_t* layer, std::string_view* rest) {
    if (!name.starts_with("layers.")) return false;
    name.remove_prefix(7);
    const size_t dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot > 9) return false;
    *layer = 0;
    for (size_t i = 0; i < dot; ++i) {
        if (name[i] < '0' || name[i] > '9') return false;
        *layer = *layer * 10 + uint64_t(name[i] - '0');
    }
    *rest = name.substr(dot + 1);
    return true;
}

void rename_ref_routed_experts(nlohmann::json& root) {
    const nlohmann::json* routed = ref_field(root, "n_routed_experts");
    if (routed == nullptr)
        throw_input_error("config.json", "n_routed_experts", "missing", "the routed expert count");
    root["num_experts"] = *routed;
    root.erase("num_local_experts");
}

std::optional<std::vector<int64_t>> ref_moe_part_shape(const RefConfig& c, std::string_view rest,
                                                       bool moe) {
    using Shape = std::vector<int64_t>;
    const int64_t hidden = c.hidden_size;
    const int64_t shared =
        int64_t{c.moe_intermediate_size.value_or(0)} * c.shared_experts.value_or(0);
    const Shape wrong_kind{0};  // a tensor of another kind of layer: a shape no source has
    // The dense feed-forward of the leading layers.
    if (rest == "mlp.gate_proj.weight" || rest == "mlp.up_proj.weight" ||
        rest == "mlp.down_proj.weight")
        return moe ? wrong_kind : std::optional<Shape>{};  // the decoder table's
    if (!rest.starts_with("mlp.")) return std::nullopt;
    if (!moe) return wrong_kind;  // router, experts, shared experts
    if (rest == "mlp.gate.e_score_correction_bias") return Shape{int64_t{c.num_experts}};
    if (rest == "mlp.shared_experts.gate_proj.weight" ||
        rest == "mlp.shared_experts.up_proj.weight")
        return Shape{shared, hidden};
    if (rest == "mlp.shared_experts.down_proj.weight") return Shape{hidden, shared};
    return std::nullopt;  // router and experts: the decoder table's
}

std::optional<std::vector<int64_t>> ref_nextn_head_shape(const RefConfig& c, std::string_view rest,
                                                         bool mtp) {
    using Shape = std::vector<int64_t>;
    const int64_t hidden = c.hidden_size, vocab = c.vocab_size;
    const Shape wrong_kind{0};
    if (rest == "eh_proj.weight") return mtp ? Shape{hidden, 2 * hidden} : wrong_kind;
    if (rest == "enorm.weight" || rest == "hnorm.weight" || rest == "shared_head.norm.weight")
        return mtp ? Shape{hidden} : wrong_kind;
    if (rest == "embed_tokens.weight" || rest == "shared_head.head.weight")
        return mtp ? Shape{vocab, hidden} : wrong_kind;
    return std::nullopt;
}

void read_ref_moe_routing(const nlohmann::json& root, RefConfig& c) {
    c.shared_experts = ref_count(root, "n_shared_experts", 64);
    c.first_k_dense = ref_count(root, "first_k_dense_replace", kMaxLayers);
    c.n_group = ref_count(root, "n_group", kMaxExperts);
    c.topk_group = ref_count(root, "topk_group", kMaxExperts);
    if (const nlohmann::json* f = ref_field(root, "routed_scaling_factor"); f && f->is_number())
        c.routed_scaling_factor = f->get<float>();
    if (const nlohmann::json* b = ref_field(root, "norm_topk_prob"); b && b->is_boolean())
        c.norm_topk_prob = b->get<bool>();
    for (const char* key : {"score_function", "scoring_func", "score_func", "moe_router_activation",
                            "moe_router_activation_func", "expert_selection_fn"})
        if (const nlohmann::json* f = ref_field(root, key)) {
            c.score_function_named = true;
            if (f->is_string()) c.score_function = f->get<std::string>();
            break;
        }
}

}  // namespace rebox::verify_ref
