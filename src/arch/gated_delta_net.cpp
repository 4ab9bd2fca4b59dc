// The hooks the gated delta-net families share (gated_delta_net.hpp): the linear-attention numbers
// of config.json, the layer kinds from full_attention_interval, and what their loaders refuse.
#include "gated_delta_net.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "rebox/error.hpp"

namespace rebox::arch::detail::gated_delta_net {
namespace {

// A positive count of config.json, at most `cap`.
uint32_t count_field(const nlohmann::json& root, const char* field, uint32_t fallback,
                     uint32_t cap) {
    const auto it = root.find(field);
    if (it == root.end() || it->is_null()) return fallback;
    if (!it->is_number_unsigned() || it->get<uint64_t>() == 0 || it->get<uint64_t>() > cap)
        throw_input_error("config.json", field, "is " + it->dump(),
                          "a whole number from 1 to " + std::to_string(cap));
    return static_cast<uint32_t>(it->get<uint64_t>());
}

}  // namespace

void linear_attention_layer_kinds(ModelConfig& config) {
    config.layer_kinds.clear();
    const uint32_t interval = std::max<uint32_t>(config.full_attention_interval, 1);
    for (uint32_t i = 0; i < config.num_hidden_layers; ++i)
        config.layer_kinds.push_back((i + 1) % interval != 0 ? kLinear : kFull);
    config.layer_kinds.resize(config.num_hidden_layers + config.nextn_layers, kMtp);
}

// layer_types is checked against the loader's interval rule in linear_attention_checks.
void read_linear_attention(const nlohmann::json& root, ModelConfig& config) {
    constexpr uint32_t kCap = 1u << 16;
    ModelConfig::LinearAttention l;
    l.conv_kernel = count_field(root, "linear_conv_kernel_dim", 4, 64);
    l.key_head_dim = count_field(root, "linear_key_head_dim", 128, kCap);
    l.value_head_dim = count_field(root, "linear_value_head_dim", 128, kCap);
    l.key_heads = count_field(root, "linear_num_key_heads", 16, kCap);
    l.value_heads = count_field(root, "linear_num_value_heads", 32, kCap);
    config.linear_attention = l;
    config.full_attention_interval = count_field(root, "full_attention_interval", 4, kCap);
    const auto mtp = root.find("mtp_num_hidden_layers");
    config.nextn_layers = mtp == root.end() || mtp->is_null() || *mtp == 0
                              ? 0
                              : count_field(root, "mtp_num_hidden_layers", 0, 64);
    const auto rope = root.find("rope_parameters");
    const nlohmann::json* params = rope != root.end() && rope->is_object() ? &*rope : nullptr;
    if (params && params->contains("partial_rotary_factor")) {
        const nlohmann::json& factor = (*params)["partial_rotary_factor"];
        if (!factor.is_number() || !(factor.get<double>() > 0.0 && factor.get<double>() <= 1.0))
            throw_input_error("config.json", "rope_parameters.partial_rotary_factor",
                              "is " + factor.dump(), "a number in (0, 1]");
        config.partial_rotary_factor = factor.get<double>();
    }
    config.rope_sections.clear();
    if (params && params->contains("mrope_section")) {
        const nlohmann::json& sections = (*params)["mrope_section"];
        if (!sections.is_array() || sections.size() > 4)
            throw_input_error("config.json", "rope_parameters.mrope_section",
                              "is " + sections.dump(), "up to 4 whole numbers");
        for (const nlohmann::json& s : sections) {
            if (!s.is_number_unsigned() || s.get<uint64_t>() > kCap)
                throw_input_error("config.json", "rope_parameters.mrope_section",
                                  "holds " + s.dump(), "whole numbers");
            config.rope_sections.push_back(static_cast<int32_t>(s.get<uint64_t>()));
        }
        config.rope_sections.resize(4, 0);  // TextModel pads [t, h, w] to 4
    }
    if (config.num_hidden_layers > kCap) return;  // refused by the caps after this hook
    linear_attention_layer_kinds(config);
}

void linear_attention_checks(const Architecture& arch, const ModelConfig& config,
                             std::vector<std::string>& problems) {
    const std::string loader = "llama.cpp's " + std::string(arch.gguf_arch) + " loader";
    const ModelConfig::LinearAttention l =
        config.linear_attention.value_or(ModelConfig::LinearAttention{});
    if (l.key_heads == 0 || l.value_heads % l.key_heads != 0)
        problems.push_back("linear_num_value_heads " + std::to_string(l.value_heads) +
                           " is not a multiple of linear_num_key_heads " +
                           std::to_string(l.key_heads) +
                           ": the value heads cannot be grouped under the key heads");
    if (l.key_head_dim != l.value_head_dim)
        problems.push_back("linear_key_head_dim " + std::to_string(l.key_head_dim) +
                           " differs from linear_value_head_dim " +
                           std::to_string(l.value_head_dim) + ": " + loader +
                           " sizes both from ssm.state_size");
    if (!config.layer_types.empty() && config.layer_types.size() != config.num_hidden_layers) {
        problems.push_back("layer_types has " + std::to_string(config.layer_types.size()) +
                           " entries for num_hidden_layers " +
                           std::to_string(config.num_hidden_layers));
        return;
    }
    for (size_t i = 0; i < config.layer_types.size(); ++i) {
        const bool full = (i + 1) % config.full_attention_interval == 0;
        const std::string& type = config.layer_types[i];
        if (type == (full ? "full_attention" : "linear_attention")) continue;
        problems.push_back(
            "layer_types[" + std::to_string(i) + "] is '" + type + "', but " + loader +
            " makes layer " + std::to_string(i) + (full ? " full attention" : " linear attention") +
            " (every full_attention_interval = " + std::to_string(config.full_attention_interval) +
            "th layer is full)");
        return;
    }
}

}  // namespace rebox::arch::detail::gated_delta_net
