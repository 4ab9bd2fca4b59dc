// index_nvidia_fp4_source: verify's pairing of ModelOpt / compressed-tensors FP4 modules
// (nvidia_fp4_index.hpp). A module whose parts disagree is an entry with a problem naming the part.
#include "verify/sources/nvidia_fp4_index.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref {
namespace {

struct Part {
    const SafetensorsFile* file = nullptr;
    const StTensorInfo* info = nullptr;
};

std::string without(const std::string& name, std::string_view suffix) {
    if (name.size() > suffix.size() && name.ends_with(suffix))
        return name.substr(0, name.size() - suffix.size());
    return "";
}

std::optional<nlohmann::json> read_json(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    return j;
}

// One F32 value of a [] or [1] part, or the reason it is not one.
std::optional<float> scalar(const Part& part, std::string* why) {
    const auto& shape = part.info->shape;
    if (part.info->dtype != StDtype::F32 ||
        !(shape.empty() || (shape.size() == 1 && shape[0] == 1))) {
        *why = std::string(st_dtype_name(part.info->dtype)) + " " + shape_text(shape);
        return std::nullopt;
    }
    float value = 0;
    std::memcpy(&value, part.file->data(*part.info).data(), 4);
    if (!std::isfinite(value) || !(value > 0)) {
        *why = "value " + std::to_string(value);
        return std::nullopt;
    }
    return value;
}

void bind_module(NvidiaFp4Layout layout, const std::string& module, const SafetensorsModel& model,
                 const Part& weight, SourceTensor& entry) {
    const bool mx = layout == NvidiaFp4Layout::ct_mxfp4;
    const uint64_t group = mx ? 32 : 16;
    const std::string& file = entry.file;
    const auto part = [&](const char* suffix) -> std::optional<Part> {
        const StLocated* at = model.find(module + suffix);
        if (at == nullptr) return std::nullopt;
        return Part{at->file, at->info};
    };
    const auto& ws = weight.info->shape;
    if (weight.info->dtype != StDtype::U8 || ws.size() != 2 || ws[0] < 1 || ws[1] < 1) {
        entry.problem =
            error_message(file, weight.info->name,
                          std::string(st_dtype_name(weight.info->dtype)) + " " + shape_text(ws),
                          "U8 [out, in/2]");
        return;
    }
    const uint64_t rows = static_cast<uint64_t>(ws[0]), cols = 2 * static_cast<uint64_t>(ws[1]);
    const std::optional<Part> scales = part(".weight_scale");
    const std::vector<int64_t> scale_shape = {ws[0], static_cast<int64_t>(cols / group)};
    if (cols % group != 0 || !scales ||
        !(scales->info->dtype == StDtype::U8 || (!mx && scales->info->dtype == StDtype::F8_E4M3)) ||
        scales->info->shape != scale_shape) {
        entry.problem =
            error_message(file, module + ".weight_scale",
                          scales ? std::string(st_dtype_name(scales->info->dtype)) + " " +
                                       shape_text(scales->info->shape)
                                 : std::string("missing"),
                          std::string(mx ? "U8 " : "F8_E4M3 ") + shape_text(scale_shape));
        return;
    }
    const std::span<const uint8_t> scale_bytes = scales->file->data(*scales->info);
    for (size_t i = 0; i < scale_bytes.size(); ++i) {
        const uint8_t s = scale_bytes[i];
        if (mx ? s == 0xff : (s >= 0x80 || s == 0x7f)) {
            char what[96];
            std::snprintf(what, sizeof what, "scale byte 0x%02x at index %zu", s, i);
            entry.problem = error_message(file, module + ".weight_scale", what,
                                          mx ? "a finite E8M0 byte (0x00..0xfe)"
                                             : "a finite non-negative E4M3 byte (0x00..0x7e)");
            return;
        }
    }
    std::string why;
    if (layout == NvidiaFp4Layout::modelopt_nvfp4) {
        const std::optional<Part> s2 = part(".weight_scale_2");
        const auto value = s2 ? scalar(*s2, &why) : std::nullopt;
        if (!value) {
            entry.problem = error_message(file, module + ".weight_scale_2", s2 ? why : "missing",
                                          "one positive F32 value");
            return;
        }
        entry.has_scale2 = true;
        entry.scale2 = *value;
    } else if (layout == NvidiaFp4Layout::ct_nvfp4) {
        const std::optional<Part> g = part(".weight_global_scale");
        const auto value = g ? scalar(*g, &why) : std::nullopt;
        if (!value) {
            entry.problem = error_message(file, module + ".weight_global_scale",
                                          g ? why : "missing", "one positive F32 value");
            return;
        }
        entry.has_scale2 = true;
        // The value is E2M1 * s / g; the nearest binary32 to 1/g is what a GGUF can hold.
        entry.scale2 = 1.0f / *value;  // IEEE division: the correctly rounded quotient
        entry.scale2_error = std::fabs(static_cast<double>(entry.scale2) * *value - 1.0);
    }
    entry.quantized = true;
    entry.fp4 = true;
    entry.shape = {ws[0], static_cast<int64_t>(cols)};
    entry.element_count = rows * cols;
    entry.fp4_source = Fp4Source{!mx, group, weight.file->data(*weight.info), scale_bytes};
}

}  // namespace

std::optional<NvidiaFp4Layout> nvidia_fp4_layout(const std::filesystem::path& model_dir) {
    if (const auto side = read_json(model_dir / "hf_quant_config.json")) {
        const auto q = side->find("quantization");
        if (q != side->end() && q->is_object() && q->value("quant_algo", "") == "NVFP4")
            return NvidiaFp4Layout::modelopt_nvfp4;
        return std::nullopt;
    }
    const auto config = read_json(model_dir / "config.json");
    if (!config) return std::nullopt;
    const auto q = config->find("quantization_config");
    if (q == config->end() || !q->is_object()) return std::nullopt;
    const std::string method = q->value("quant_method", "");
    if (method == "modelopt" && q->value("quant_algo", "") == "NVFP4")
        return NvidiaFp4Layout::modelopt_nvfp4;
    if (method != "compressed-tensors") return std::nullopt;
    std::string format = q->value("format", "");
    if (const auto groups = q->find("config_groups"); groups != q->end() && groups->is_object())
        for (const auto& [key, group] : groups->items())
            if (group.is_object() && group.contains("format") && group["format"].is_string())
                format = group["format"].get<std::string>();
    if (format == "nvfp4-pack-quantized") return NvidiaFp4Layout::ct_nvfp4;
    if (format == "mxfp4-pack-quantized") return NvidiaFp4Layout::ct_mxfp4;
    return std::nullopt;
}

SourceIndex index_nvidia_fp4_source(const SafetensorsModel& model, NvidiaFp4Layout layout) {
    // Every tensor, in name order (the order entries and problems are listed in); look-ups by
    // name go to the model's own index.
    std::vector<Part> parts;
    for (const auto& file : model.files())
        for (const StTensorInfo& info : file->tensors()) parts.push_back({file.get(), &info});
    std::sort(parts.begin(), parts.end(),
              [](const Part& a, const Part& b) { return a.info->name < b.info->name; });
    const auto has = [&](const std::string& name) { return model.find(name) != nullptr; };
    const bool modelopt = layout == NvidiaFp4Layout::modelopt_nvfp4;
    const std::string main_suffix = modelopt ? ".weight" : ".weight_packed";
    const std::vector<std::string> part_suffixes =
        modelopt ? std::vector<std::string>{".weight_scale", ".weight_scale_2", ".input_scale",
                                            ".k_scale", ".v_scale"}
                 : std::vector<std::string>{".weight_scale", ".weight_global_scale",
                                            ".input_global_scale", ".weight_shape"};
    SourceIndex index;
    for (const Part& part : parts) {
        const std::string& name = part.info->name;
        bool is_part = false;
        for (const std::string& suffix : part_suffixes)
            if (const std::string module = without(name, suffix); !module.empty()) {
                is_part = true;
                if (!has(module + main_suffix))
                    index.problems.push_back(
                        error_message(part.file->display_name(), name,
                                      "has no " + module + main_suffix + " to belong to"));
            }
        if (is_part) continue;
        SourceTensor entry;
        entry.file = part.file->display_name();
        const std::string module = without(name, main_suffix);
        // ModelOpt: a P.weight without P.weight_scale is a module left unquantized.
        if (module.empty() || (modelopt && !has(module + ".weight_scale"))) {
            entry.name = name;
            entry.shape = part.info->shape;
            entry.element_count = part.info->element_count();
            bind_plain(*part.file, *part.info, entry);
            index.entries.push_back(std::move(entry));
            continue;
        }
        entry.name = module + ".weight";
        bind_module(layout, module, model, part, entry);
        index.entries.push_back(std::move(entry));
    }
    for (size_t i = 0; i < index.entries.size(); ++i) add_by_stripped_name(index, i);
    return index;
}

bool ref_graph_applies_scale(std::string_view gguf_arch, const std::string& gguf_weight) {
    std::string role = without(gguf_weight, ".weight");
    if (role.starts_with("blk.")) {
        const size_t dot = role.find('.', 4);
        role = dot == std::string::npos ? "" : role.substr(dot + 1);
    }
    const bool attention = role == "attn_q" || role == "attn_k" || role == "attn_v" ||
                           role == "attn_qkv" || role == "attn_output";
    const bool ffn = role == "ffn_gate" || role == "ffn_up" || role == "ffn_down";
    const bool exps = role == "ffn_gate_exps" || role == "ffn_up_exps" || role == "ffn_down_exps";
    const bool output = role == "output";
    const bool linear =
        role == "attn_gate" || role == "ssm_beta" || role == "ssm_alpha" || role == "ssm_out";
    const bool ssm = role == "ssm_in" || role == "ssm_out";
    const bool shexp =
        role == "ffn_gate_shexp" || role == "ffn_up_shexp" || role == "ffn_down_shexp";
    const RefArch* arch = find_ref_arch(gguf_arch);  // its record's scale_roles
    const uint16_t roles = arch != nullptr ? arch->scale_roles : uint16_t{kScaleNone};
    return (attention && (roles & kScaleAttention)) ||
           (role == "attn_output" && (roles & kScaleAttentionOutput)) ||
           (ffn && (roles & kScaleFfn)) || (exps && (roles & kScaleExperts)) ||
           (output && (roles & kScaleOutput)) || (linear && (roles & kScaleLinearAttention)) ||
           (ssm && (roles & kScaleSsm)) || (shexp && (roles & kScaleSharedExperts)) ||
           (role == "nextn.eh_proj" && (roles & kScaleNextn));
}

}  // namespace rebox::verify_ref
