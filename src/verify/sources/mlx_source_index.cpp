// verify's MLX source index (docs/formats.md §1-2). Bits and group come from config.json
// only; a weight, scales or biases shape that disagrees with them is a problem on the tensor.
#include "verify/sources/mlx_source_index.hpp"

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "model/json_file.hpp"
#include "rebox/error.hpp"
#include "verify/sources/mlx_fp4_index.hpp"
#include "verify/sources/prequant_config.hpp"

namespace rebox::verify_ref {
namespace {

constexpr std::initializer_list<const char*> kBlockKeys = {"quantization", "quantization_config"};

struct Setting {
    bool quantized = true;
    int64_t bits = 0, group = 0;
    std::string mode;  // "" = absent
};

struct MlxConfig {
    bool found = false;
    std::string field;
    Setting global;
    std::map<std::string, Setting> overrides;
};

nlohmann::json read_config(const std::filesystem::path& path) {
    // The converter's side-file cap, checked from the size before reading.
    rebox::detail::check_file_size(path, rebox::detail::kMaxConfigBytes);
    std::ifstream in(path, std::ios::binary);
    if (!in) return nlohmann::json();
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    nlohmann::json root = nlohmann::json::parse(text, nullptr, false);
    if (root.is_discarded()) throw_input_error(path.string(), "", "not valid JSON");
    return root;
}

int64_t small_int(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number_integer()) return 0;
    const int64_t value = it->get<int64_t>();
    return value > 0 && value <= 4096 ? value : -1;
}

Setting parse_setting(const nlohmann::json& value) {
    Setting s;
    if (value.is_boolean()) {
        s.quantized = value.get<bool>();
        return s;
    }
    if (!value.is_object()) {
        s.quantized = false;
        return s;
    }
    s.bits = small_int(value, "bits");
    s.group = small_int(value, "group_size");
    if (const auto mode = value.find("mode"); mode != value.end())
        s.mode = mode->is_string() ? mode->get<std::string>() : mode->dump();
    return s;
}

MlxConfig parse_config(const nlohmann::json& root) {
    MlxConfig config;
    const nlohmann::json* block = find_quant_block(root, kBlockKeys, nullptr, &config.field);
    if (!block) return config;
    config.found = true;
    config.global = parse_setting(*block);
    for (const auto& [key, value] : block->items())
        if (value.is_object() || value.is_boolean()) config.overrides[key] = parse_setting(value);
    return config;
}

struct Part {
    const SafetensorsFile* file = nullptr;
    const StTensorInfo* info = nullptr;
};

// Fills entry (name P.weight) from the three parts, or sets entry.problem.
void bind_module(const MlxConfig& config, const std::string& module, const Part& weight,
                 const Part& scales, const Part* biases, SourceTensor& entry) {
    const std::string& file = weight.file->display_name();
    const auto fail = [&](const std::string& field, const std::string& what,
                          const std::string& expected = "") {
        entry.problem = error_message(file, field, what, expected);
    };
    const auto over = config.overrides.find(module);
    Setting s = over != config.overrides.end() ? over->second : config.global;
    if (s.mode.empty()) s.mode = config.global.mode;
    const std::string field =
        "config.json " + config.field + (over != config.overrides.end() ? "[" + module + "]" : "");
    if (!config.found)
        return fail(entry.name, "quantized module but config.json has no quantization block");
    if (!s.quantized) return fail(entry.name, field + " says not quantized but .scales exists");
    if (bind_fp4_module(s.mode, s.bits, s.group, field, module, *weight.file, *weight.info,
                        *scales.file, *scales.info, biases != nullptr, entry))
        return;
    if (!s.mode.empty() && s.mode != "affine")
        return fail(entry.name, field + " mode '" + s.mode + "'", "affine, mxfp4 or nvfp4");
    const bool bits_ok =
        s.bits == 2 || s.bits == 3 || s.bits == 4 || s.bits == 5 || s.bits == 6 || s.bits == 8;
    if (!bits_ok) return fail(entry.name, field + " bits " + std::to_string(s.bits), "2,3,4,5,6,8");
    if (s.group != 32 && s.group != 64 && s.group != 128)
        return fail(entry.name, field + " group_size " + std::to_string(s.group), "32, 64 or 128");
    if (!biases) return fail(module + ".biases", "missing (MLX affine has scales and biases)");
    // [rows, packed], or stacked experts [E, rows, packed] (mlx-lm switch_mlp): E*rows rows.
    const std::vector<int64_t>& wshape = weight.info->shape;
    bool dims_ok = weight.info->dtype == StDtype::U32 && (wshape.size() == 2 || wshape.size() == 3);
    int64_t rows = 1;
    for (size_t i = 0; dims_ok && i + 1 < wshape.size(); ++i) {
        dims_ok = wshape[i] >= 1 && wshape[i] <= (int64_t{1} << 31);
        rows *= wshape[i];
    }
    if (!dims_ok || wshape.back() < 1 || (wshape.back() * 32) % s.bits != 0 ||
        (wshape.back() * 32 / s.bits) % s.group)
        return fail(entry.name,
                    std::string(st_dtype_name(weight.info->dtype)) + " " + shape_text(wshape),
                    "U32 [rows, cols*bits/32] (or [E, rows, cols*bits/32]) with cols a multiple "
                    "of group_size " +
                        std::to_string(s.group) + " at bits " + std::to_string(s.bits));
    const int64_t cols = wshape.back() * 32 / s.bits;
    std::vector<int64_t> param_shape(wshape.begin(), wshape.end() - 1);
    param_shape.push_back(cols / s.group);
    SourceFloat dtype;
    if (!source_float(scales.info->dtype, &dtype) || biases->info->dtype != scales.info->dtype)
        return fail(module + ".scales/.biases",
                    std::string(st_dtype_name(scales.info->dtype)) + "/" +
                        std::string(st_dtype_name(biases->info->dtype)),
                    "one of F16, BF16, F32 for both");
    for (const Part* part : {&scales, biases})
        if (part->info->shape != param_shape)
            return fail(part->info->name, "shape " + shape_text(part->info->shape),
                        shape_text(param_shape) + " from bits " + std::to_string(s.bits) +
                            ", group_size " + std::to_string(s.group));
    entry.shape.assign(wshape.begin(), wshape.end() - 1);
    entry.shape.push_back(cols);
    entry.element_count = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols);
    entry.quant = QuantView{weight.file->data(*weight.info),   scales.file->data(*scales.info),
                            biases->file->data(*biases->info), static_cast<unsigned>(s.bits),
                            static_cast<uint64_t>(s.group),    dtype};
}

std::string strip(const std::string& name, const std::string& suffix) {
    if (name.size() > suffix.size() && name.ends_with(suffix))
        return name.substr(0, name.size() - suffix.size());
    return "";
}

}  // namespace

bool is_mlx_source(const SafetensorsModel& model, const std::filesystem::path& config_path) {
    for (const auto& file : model.files())
        if (file->metadata().count("mcq")) return false;
    std::string field;
    const nlohmann::json root = read_config(config_path);
    const nlohmann::json* block = find_quant_block(root, kBlockKeys, nullptr, &field);
    return block && (block->contains("bits") || block->contains("group_size"));
}

SourceIndex index_mlx_source(const SafetensorsModel& model,
                             const std::filesystem::path& config_path) {
    const MlxConfig config = parse_config(read_config(config_path));
    std::map<std::string, Part> parts;
    for (const auto& file : model.files())
        for (const StTensorInfo& info : file->tensors()) parts[info.name] = {file.get(), &info};
    const auto find = [&](const std::string& name) -> const Part* {
        const auto it = parts.find(name);
        return it == parts.end() ? nullptr : &it->second;
    };

    SourceIndex index;
    for (const auto& file : model.files()) {
        const std::string& file_name = file->display_name();
        for (const StTensorInfo& info : file->tensors()) {
            std::string module = strip(info.name, ".scales");
            if (!module.empty()) {
                if (!find(module + ".weight"))
                    index.problems.push_back(error_message(file_name, info.name,
                                                           "scales without " + module + ".weight"));
                continue;
            }
            module = strip(info.name, ".biases");
            if (!module.empty()) {
                if (!find(module + ".scales"))
                    index.problems.push_back(error_message(file_name, info.name,
                                                           "biases without " + module + ".scales"));
                continue;
            }
            SourceTensor entry;
            entry.name = info.name;
            entry.file = file_name;
            module = strip(info.name, ".weight");
            if (const Part* scales = module.empty() ? nullptr : find(module + ".scales")) {
                entry.quantized = true;
                bind_module(config, module, Part{file.get(), &info}, *scales,
                            find(module + ".biases"), entry);
            } else {
                entry.shape = info.shape;
                entry.element_count = info.element_count();
                bind_plain(*file, info, entry);
            }
            index.entries.push_back(std::move(entry));
        }
    }
    for (size_t i = 0; i < index.entries.size(); ++i) add_by_stripped_name(index, i);
    return index;
}

}  // namespace rebox::verify_ref
