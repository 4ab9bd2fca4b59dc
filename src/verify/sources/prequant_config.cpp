// quantization_config as GPTQ (AutoGPTQ / GPTQModel), AWQ (AutoAWQ) and compressed-tensors write
// it (docs/formats.md §5). Unknown values are a problem naming the field, never a guess.
#include "verify/sources/prequant_config.hpp"

#include <fstream>
#include <iterator>

#include "model/json_file.hpp"
#include "rebox/error.hpp"

namespace rebox::verify_ref {

const nlohmann::json* find_quant_block(const nlohmann::json& root,
                                       std::initializer_list<const char*> keys,
                                       const char* required_member, std::string* field) {
    if (!root.is_object()) return nullptr;
    for (const char* scope_key : {"", "text_config"}) {
        const nlohmann::json* scope = &root;
        if (*scope_key) {
            const auto it = root.find(scope_key);
            if (it == root.end() || !it->is_object()) continue;
            scope = &*it;
        }
        for (const char* key : keys) {
            const auto it = scope->find(key);
            if (it != scope->end() && it->is_object() &&
                (!required_member || it->contains(required_member))) {
                *field = *scope_key ? std::string(scope_key) + "." + key : std::string(key);
                return &*it;
            }
        }
    }
    return nullptr;
}

namespace {

// An integer field (first of the spellings present), or `fallback` when none is.
int64_t int_field(const nlohmann::json& block, std::initializer_list<const char*> keys,
                  int64_t fallback, bool* bad) {
    for (const char* key : keys) {
        const auto it = block.find(key);
        if (it == block.end() || it->is_null()) continue;
        if (!it->is_number_integer()) {
            *bad = true;
            return fallback;
        }
        return it->get<int64_t>();
    }
    return fallback;
}

std::string string_field(const nlohmann::json& block, const char* key) {
    const auto it = block.find(key);
    return it != block.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void parse_gptq_awq(const nlohmann::json& block, PrequantConfig& config) {
    bool bad = false;
    config.bits = int_field(block, {"bits", "w_bit"}, 0, &bad);
    const int64_t group = int_field(block, {"group_size", "q_group_size"}, 0, &bad);
    if (bad) {
        config.problem = config.field + ".bits/group_size: not an integer";
        return;
    }
    config.group = group == -1 ? 0 : group;
    if (group == 0 || group < -1) {
        config.problem = config.field + ".group_size " + std::to_string(group) +
                         ": expected a positive group size or -1";
        return;
    }
    if (config.method == PrequantMethod::gptq) {
        if (config.bits != 2 && config.bits != 3 && config.bits != 4 && config.bits != 8) {
            config.problem = config.field + ".bits " + std::to_string(config.bits) +
                             ": GPTQ stores 2, 3, 4 or 8 bits";
            return;
        }
        if (const auto marlin = block.find("is_marlin_format");
            marlin != block.end() && marlin->is_boolean() && marlin->get<bool>()) {
            config.problem = config.field + ".is_marlin_format true: verify reads the GPTQ layout";
            return;
        }
        if (const std::string pack = string_field(block, "pack_dtype");
            !pack.empty() && pack != "int32") {
            config.problem = config.field + ".pack_dtype '" + pack + "': verify reads int32";
            return;
        }
        std::string format = string_field(block, "checkpoint_format");
        if (format.empty()) format = string_field(block, "format");
        if (format.empty() || format == "gptq")
            config.gptq_stores_zero_minus_one = true;
        else if (format == "gptq_v2")
            config.gptq_stores_zero_minus_one = false;
        else
            config.problem = config.field + ".checkpoint_format '" + format +
                             "': verify reads \"gptq\" and \"gptq_v2\"";
        return;
    }
    if (config.bits != 4) {
        config.problem =
            config.field + ".bits " + std::to_string(config.bits) + ": AWQ gemm stores 4 bits";
        return;
    }
    if (const auto zero_point = block.find("zero_point");
        zero_point != block.end() && zero_point->is_boolean() && !zero_point->get<bool>()) {
        config.problem = config.field + ".zero_point false: verify reads AWQ with zero points";
        return;
    }
    std::string version = string_field(block, "version");
    for (char& c : version) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    config.awq_gemv = version == "gemv";
    if (!version.empty() && version != "gemm" && version != "gemv")
        config.problem = config.field + ".version '" + version +
                         "': verify reads AWQ \"gemm\" and \"gemv\" checkpoints";
}

void parse_compressed_tensors(const nlohmann::json& block, PrequantConfig& config) {
    if (const std::string format = string_field(block, "format"); !format.empty())
        config.ct_formats.insert(format);
    const auto groups = block.find("config_groups");
    if (groups == block.end() || !groups->is_object() || groups->empty()) {
        config.problem = config.field + ".config_groups: missing or empty";
        return;
    }
    bool first = true;
    for (const auto& [name, group] : groups->items()) {
        if (!group.is_object()) continue;
        if (const std::string format = string_field(group, "format"); !format.empty())
            config.ct_formats.insert(format);
        const auto weights = group.find("weights");
        if (weights == group.end() || !weights->is_object()) continue;
        bool bad = false;
        const int64_t bits = int_field(*weights, {"num_bits"}, 0, &bad);
        const std::string strategy = string_field(*weights, "strategy");
        const int64_t group_size = int_field(*weights, {"group_size"}, 0, &bad);
        const std::string type = string_field(*weights, "type");
        const std::string where = config.field + ".config_groups." + name + ".weights";
        if (bad || bits < 1 || bits > 8 || (!type.empty() && type != "int")) {
            config.problem = where + ": expected type \"int\" with num_bits 1..8";
            return;
        }
        if (strategy != "group" && strategy != "channel") {
            config.problem = where + ".strategy '" + strategy + "': verify reads group, channel";
            return;
        }
        if (strategy == "group" && group_size < 1) {
            config.problem = where + ".group_size: expected a positive integer";
            return;
        }
        if (!first && (bits != config.ct_bits || strategy != config.ct_strategy ||
                       (strategy == "group" && group_size != config.ct_group))) {
            config.problem = where +
                             ": differs from another config group (verify reads one "
                             "num_bits/strategy/group_size per checkpoint)";
            return;
        }
        first = false;
        config.ct_bits = bits;
        config.ct_strategy = strategy;
        config.ct_group = strategy == "group" ? group_size : 0;
    }
    if (first) config.problem = config.field + ".config_groups: no group has \"weights\"";
    for (const std::string& format : config.ct_formats)
        if (format != "pack-quantized" && format != "int-quantized" &&
            format != "naive-quantized" && format != "mixed-precision" && config.problem.empty())
            config.problem = config.field + " format '" + format +
                             "': verify reads pack-quantized and int-quantized";
}

}  // namespace

PrequantConfig parse_prequant_config(const nlohmann::json& root) {
    PrequantConfig config;
    const nlohmann::json* block =
        find_quant_block(root, {"quantization_config"}, "quant_method", &config.field);
    if (!block) return config;
    const std::string method = string_field(*block, "quant_method");
    if (method == "gptq")
        config.method = PrequantMethod::gptq;
    else if (method == "awq")
        config.method = PrequantMethod::awq;
    else if (method == "compressed-tensors")
        config.method = PrequantMethod::compressed_tensors;
    else {
        config.method = PrequantMethod::unknown;
        config.problem = config.field + ".quant_method '" + method +
                         "': verify reads gptq, awq and compressed-tensors";
        return config;
    }
    if (config.method == PrequantMethod::compressed_tensors)
        parse_compressed_tensors(*block, config);
    else
        parse_gptq_awq(*block, config);
    return config;
}

PrequantConfig read_prequant_config(const std::filesystem::path& config_path) {
    rebox::detail::check_file_size(config_path, rebox::detail::kMaxConfigBytes);
    std::ifstream in(config_path, std::ios::binary);
    if (!in) return PrequantConfig{};
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const nlohmann::json root = nlohmann::json::parse(text, nullptr, false);
    if (root.is_discarded()) throw_input_error(config_path.string(), "", "not valid JSON");
    return parse_prequant_config(root);
}

}  // namespace rebox::verify_ref
