// PackedReader and the quantization_config look-ups the GPTQ, AWQ and compressed-tensors
// adapters share.
#include "prequant_common.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "format/shape_text.hpp"
#include "rebox/error.hpp"
#include "source_helpers.hpp"

namespace rebox::prequant {

const nlohmann::json* quantization_config(const nlohmann::json& config) {
    if (!config.is_object()) return nullptr;
    if (const auto it = config.find("quantization_config"); it != config.end() && it->is_object())
        return &*it;
    if (const auto text = config.find("text_config"); text != config.end() && text->is_object())
        if (const auto it = text->find("quantization_config"); it != text->end() && it->is_object())
            return &*it;
    return nullptr;
}

std::string quant_method(const nlohmann::json& config) {
    const nlohmann::json* q = quantization_config(config);
    if (!q) return "";
    const auto it = q->find("quant_method");
    if (it == q->end()) return "";
    return it->is_string() ? it->get<std::string>() : it->dump();
}

std::optional<int64_t> json_int(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end()) return std::nullopt;
    if (it->is_number_integer()) return it->get<int64_t>();
    if (it->is_number_float()) {
        const double d = it->get<double>();
        if (std::floor(d) == d && std::fabs(d) < 1e15) return static_cast<int64_t>(d);
    }
    return std::nullopt;
}

int32_t load_i32(std::span<const uint8_t> bytes, uint64_t i) {
    const uint8_t* p = bytes.data() + 4 * i;
    return static_cast<int32_t>(uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 |
                                uint32_t{p[3]} << 24);
}

PackedReader::PackedReader(const ModelDir& dir, SourceModel& model)
    : model_(model), config_path_(dir.path() / "config.json"), safetensors_(dir.safetensors()) {
    files_ = dir.safetensors().files();
    for (const auto& file : files_) model_.files.push_back(file);
}

const Located* PackedReader::find(const std::string& name) const { return safetensors_.find(name); }

void PackedReader::block(const std::string& tensor, const Located& where, const std::string& reason,
                         const std::string& fix) {
    model_.blockers.push_back(Blocker{tensor, where.file->display_name() + ": " + reason, fix});
}

void PackedReader::block_config(const std::string& field, const std::string& reason,
                                const std::string& fix) {
    throw_input_error(config_path_.string(), field, reason + "; " + fix);
}

bool PackedReader::expect(const std::string& name, const Located& part,
                          std::initializer_list<StDtype> dtypes, const std::vector<int64_t>& shape,
                          const std::string& why) {
    bool dtype_ok = false;
    std::string names;
    for (StDtype d : dtypes) {
        dtype_ok |= part.info->dtype == d;
        names += (names.empty() ? "" : " or ") + std::string(st_dtype_name(d));
    }
    if (!dtype_ok) {
        block(name, part,
              part.info->name + " has dtype " + std::string(st_dtype_name(part.info->dtype)) +
                  " (expected " + names + ")",
              "use the checkpoint as its quantizer wrote it");
        return false;
    }
    if (part.info->shape != shape) {
        block(name, part,
              part.info->name + " has shape " + detail::shape_text(part.info->shape) +
                  " (expected " + detail::shape_text(shape) + " " + why + ")",
              "use the config.json that belongs to these weights");
        return false;
    }
    return true;
}

const Located* PackedReader::require(const std::string& module, const std::string& suffix,
                                     const std::string& what) {
    const Located* part = find(module + suffix);
    if (part) return part;
    const std::string prefix = module + ".";
    const auto module_file = [&]() -> const Located* {  // holding the module's first tensor
        for (const auto& file : files_)
            for (const StTensorInfo& info : file->tensors())
                if (info.name.starts_with(prefix)) return safetensors_.find(info.name);
        return nullptr;
    };
    const Located* anchor = module_file();
    model_.blockers.push_back(
        Blocker{module + ".weight",
                (anchor ? anchor->file->display_name() + ": " : std::string()) + "missing " +
                    module + suffix + " (expected " + what + ")",
                "store every part of the quantized module"});
    return nullptr;
}

void PackedReader::walk(
    const std::vector<std::string>& anchor_suffixes, const std::vector<std::string>& part_suffixes,
    const std::function<void(const std::string& module, const Located& anchor)>& read) {
    const auto module_of = [](const std::string& name,
                              const std::string& suffix) -> std::optional<std::string> {
        if (name.size() > suffix.size() && name.ends_with(suffix))
            return name.substr(0, name.size() - suffix.size());
        return std::nullopt;
    };
    const auto anchored = [&](const std::string& module) {
        for (const std::string& a : anchor_suffixes)
            if (find(module + a)) return true;
        return false;
    };
    for (const auto& file : files_) {
        for (const StTensorInfo& info : file->tensors()) {
            const Located where{file.get(), &info};
            bool handled = false;
            for (const std::string& suffix : anchor_suffixes)
                if (const auto module = module_of(info.name, suffix)) {
                    read(*module, where);
                    handled = true;
                    break;
                }
            if (handled) continue;
            for (const std::string& suffix : part_suffixes)
                if (const auto module = module_of(info.name, suffix)) {
                    if (!anchored(*module))
                        block_stray_part(where, *module + anchor_suffixes.front());
                    handled = true;
                    break;
                }
            if (!handled) add_float(where);
        }
    }
}

void PackedReader::block_stray_part(const Located& part, const std::string& expected) {
    block(part.info->name, part,
          part.info->name + " has no quantized weight beside it (expected " + expected + ")",
          "store every part of the quantized module, or remove the stray one");
}

void PackedReader::add_float(const Located& where) {
    const std::optional<FloatDtype> dtype = source_detail::float_dtype(where.info->dtype);
    if (!dtype) {
        block(where.info->name, where,
              "dtype " + std::string(st_dtype_name(where.info->dtype)) +
                  " is not F32, F16 or BF16 and the tensor is no part of a quantized module",
              "store it as a float tensor");
        return;
    }
    model_.tensors.push_back(source_detail::float_tensor(*where.file, *where.info, *dtype));
}

bool PackedReader::read_scales(const std::string& name, const Located& scales,
                               const std::vector<int64_t>& shape, const std::string& why,
                               bool group_major, IntQuantView* v) {
    if (!expect(name, scales, {StDtype::F16, StDtype::BF16, StDtype::F32}, shape, why))
        return false;
    v->scale_dtype = *source_detail::float_dtype(scales.info->dtype);
    v->scales_group_major = group_major;
    v->scales = scales.file->data(*scales.info);
    return true;
}

bool PackedReader::read_g_idx(const std::string& name, const std::string& g_idx_name,
                              const std::string& why, IntQuantView* v) {
    const Located* where = find(g_idx_name);
    if (!where) return true;
    if (!expect(name, *where, {StDtype::I32}, {v->cols}, why)) return false;
    const std::span<const uint8_t> bytes = where->file->data(*where->info);
    bool plain = true;
    for (int64_t k = 0; k < v->cols; ++k) {
        const int32_t g = load_i32(bytes, static_cast<uint64_t>(k));
        if (g < 0 || g >= v->n_groups) {
            block(name, *where,
                  where->info->name + "[" + std::to_string(k) + "] = " + std::to_string(g) +
                      " is outside [0, " + std::to_string(v->n_groups) +
                      ") (the groups of the scales)",
                  "use the g_idx the quantizer wrote");
            return false;
        }
        plain &= g == k / v->group;
    }
    if (!plain) v->g_idx = bytes;
    v->packed_bytes += bytes.size();
    return true;
}

void PackedReader::add_int_quant(const std::string& name, const Located& anchor,
                                 const IntQuantView& v) {
    SourceTensor tensor;
    tensor.name = name;
    tensor.shape = {v.rows, v.cols};
    tensor.file = anchor.file->display_name();
    tensor.int_quant = v;
    model_.tensors.push_back(std::move(tensor));
}

}  // namespace rebox::prequant
