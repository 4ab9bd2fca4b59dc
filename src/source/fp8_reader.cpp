// read_fp8_model (fp8_reader.hpp): the block size from quantization_config, then each
// weight_scale_inv paired with its F8_E4M3 weight, every length and shape checked before a byte
// is read, every code checked for NaN and every scale for a finite value.
#include "source/fp8_reader.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "format/shape_text.hpp"
#include "prequant_common.hpp"
#include "source/fp4_checkpoint_reader.hpp"
#include "source/fp8_values.hpp"
#include "source_helpers.hpp"

namespace rebox {
namespace {

constexpr int64_t kMaxBlockSide = int64_t{1} << 20;

struct Fp8Config {
    int64_t block_rows = 0, block_cols = 0;  // block_cols 0: the whole row (one scale per row)
    std::string_view scale_suffix = ".weight_scale_inv";
    bool per_tensor = false;  // ModelOpt FP8: one scale for the whole weight ([] or [1])
};

// Two block sides [rows, cols] in 1..2^20 into config, or an input error naming `field`.
void read_block_sides(const nlohmann::json& sizes, const std::string& field,
                      prequant::PackedReader& reader, Fp8Config& config) {
    if (sizes.is_array() && sizes.size() == 2 && sizes[0].is_number_integer() &&
        sizes[1].is_number_integer()) {
        config.block_rows = sizes[0].get<int64_t>();
        config.block_cols = sizes[1].get<int64_t>();
    }
    if (config.block_rows < 1 || config.block_cols < 1 || config.block_rows > kMaxBlockSide ||
        config.block_cols > kMaxBlockSide)
        reader.block_config(field, "'" + sizes.dump() + "' is not two block sides in 1..2^20",
                            "two positive integers, e.g. [128, 128]");
}

// The one config group's "weights" of a compressed-tensors quantization_config, or nullptr.
const nlohmann::json* ct_weights(const nlohmann::json& q) {
    const auto groups = q.find("config_groups");
    if (groups == q.end() || !groups->is_object() || groups->size() != 1) return nullptr;
    const auto weights = groups->begin()->find("weights");
    return weights == groups->begin()->end() || !weights->is_object() ? nullptr : &*weights;
}

std::string text_at(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// llm-compressor's FP8: the channel strategy (one scale per output row) or the block strategy
// (block_structure [rows, cols]); conversion/base.py's dequant_model multiplies either.
Fp8Config read_ct_fp8_config(const nlohmann::json& q, prequant::PackedReader& reader) {
    const nlohmann::json& weights = *ct_weights(q);
    Fp8Config config;
    config.scale_suffix = ".weight_scale";
    const std::string strategy = text_at(weights, "strategy");
    const auto group = weights.find("group_size");
    if (group != weights.end() && !group->is_null())
        reader.block_config("quantization_config.config_groups.weights.group_size",
                            "'" + group->dump() + "' is set (llama.cpp's converter asserts none)",
                            "FP8 with the channel or block strategy");
    if (strategy == "channel") {
        config.block_rows = 1;
        return config;
    }
    const auto sizes = weights.find("block_structure");
    if (strategy != "block" || sizes == weights.end()) {
        reader.block_config("quantization_config.config_groups.weights.strategy",
                            "'" + strategy + "' is not supported",
                            "FP8 with the channel or the block strategy (block_structure)");
        return config;
    }
    read_block_sides(*sizes, "quantization_config.config_groups.weights.block_structure", reader,
                     config);
    return config;
}

Fp8Config read_fp8_config(const ModelDir& model_dir, prequant::PackedReader& reader) {
    if (modelopt_quant_algo(model_dir) == "FP8") {  // conversion/base.py's "modelopt" branch
        Fp8Config config;
        config.scale_suffix = ".weight_scale";
        config.per_tensor = true;
        return config;
    }
    const nlohmann::json* q = prequant::quantization_config(model_dir.config());
    if (is_ct_fp8(model_dir.config())) return read_ct_fp8_config(*q, reader);
    if (const auto fmt = q->find("fmt"); fmt != q->end() && *fmt != "e4m3")
        reader.block_config("quantization_config.fmt", "'" + fmt->dump() + "' is not supported",
                            "FP8 checkpoints in e4m3 (float8_e4m3fn)");
    const auto sizes = q->find("weight_block_size");
    if (sizes == q->end())
        reader.block_config("quantization_config.weight_block_size",
                            "is missing: per-tensor or per-channel FP8 scales are not supported",
                            "block-quantized FP8 (weight_block_size [128, 128])");
    Fp8Config config;
    read_block_sides(*sizes, "quantization_config.weight_block_size", reader, config);
    return config;
}

// The Fp8View of module P (P.weight + P.weight_scale_inv), or a blocker.
void read_fp8_module(prequant::PackedReader& reader, const Fp8Config& config,
                     const std::string& module, const prequant::Located& scale) {
    const std::string name = module + ".weight";
    const prequant::Located* weight = reader.find(name);
    if (weight == nullptr) {
        reader.block(scale.info->name, scale,
                     scale.info->name + " has no FP8 weight beside it (expected " + name + ")",
                     "store every part of the quantized module, or remove the stray one");
        return;
    }
    const StTensorInfo& w = *weight->info;
    if (w.shape.size() != 2 || w.shape[0] < 1 || w.shape[1] < 1) {
        reader.block(
            name, *weight,
            "FP8 weight has shape " + detail::shape_text(w.shape) + " (expected [out, in])",
            "use the checkpoint as its quantizer wrote it");
        return;
    }
    Fp8View v;
    v.rows = w.shape[0];
    v.cols = w.shape[1];
    v.block_rows = config.per_tensor ? v.rows : config.block_rows;
    v.block_cols = config.per_tensor || config.block_cols == 0 ? v.cols : config.block_cols;
    const std::string why = "for " + name + " " + detail::shape_text(w.shape) + " in blocks of " +
                            std::to_string(v.block_rows) + "x" + std::to_string(v.block_cols);
    if (!reader.expect(name, *weight, {StDtype::F8_E4M3}, w.shape, "") ||
        !reader.expect(name, scale, {StDtype::F32, StDtype::BF16, StDtype::F16},
                       !config.per_tensor ? std::vector<int64_t>{v.scale_rows(), v.scale_cols()}
                       : scale.info->shape.empty() ? std::vector<int64_t>{}
                                                   : std::vector<int64_t>{1},
                       why))
        return;
    v.scale_dtype = *source_detail::float_dtype(scale.info->dtype);
    v.codes = weight->file->data(w);
    v.scales = scale.file->data(*scale.info);
    const uint64_t n_scales = static_cast<uint64_t>(v.scale_rows() * v.scale_cols());
    if (v.codes.size() / static_cast<uint64_t>(v.cols) != static_cast<uint64_t>(v.rows) ||
        v.codes.size() % static_cast<uint64_t>(v.cols) != 0 ||
        v.scales.size() != n_scales * float_dtype_size(v.scale_dtype)) {
        reader.block(name, *weight,
                     "data size disagrees with the shapes of " + name + " and " + scale.info->name,
                     "re-download the checkpoint");
        return;
    }
    for (uint64_t i = 0; i < v.codes.size(); ++i)
        if (e4m3_is_nan(v.codes[i])) {
            char text[160];
            std::snprintf(text, sizeof text,
                          "E4M3 byte 0x%02x at row %llu, column %llu is NaN (no weight value)",
                          v.codes[i], static_cast<unsigned long long>(i / v.cols),
                          static_cast<unsigned long long>(i % v.cols));
            reader.block(name, *weight, text, "re-export the checkpoint without NaN weights");
            return;
        }
    for (int64_t br = 0; br < v.scale_rows(); ++br)
        for (int64_t bc = 0; bc < v.scale_cols(); ++bc)
            if (!std::isfinite(fp8_scale(v, br, bc))) {
                reader.block(name, scale,
                             scale.info->name + " block (" + std::to_string(br) + ", " +
                                 std::to_string(bc) + ") is not a finite scale",
                             "re-export the checkpoint");
                return;
            }
    SourceTensor tensor;
    tensor.name = name;
    tensor.shape = w.shape;
    tensor.file = weight->file->display_name();
    tensor.fp8 = v;
    reader.model().tensors.push_back(std::move(tensor));
}

}  // namespace

bool is_ct_fp8(const nlohmann::json& config) {
    const nlohmann::json* q = prequant::quantization_config(config);
    if (q == nullptr || text_at(*q, "quant_method") != "compressed-tensors") return false;
    const nlohmann::json* weights = ct_weights(*q);
    if (weights == nullptr) return false;
    std::string format = text_at(*q, "format");
    if (const std::string group = text_at(q->at("config_groups").begin().value(), "format");
        !group.empty())
        format = group;
    const auto bits = weights->find("num_bits");
    return format == "float-quantized" && text_at(*weights, "type") == "float" &&
           bits != weights->end() && *bits == 8;
}

SourceModel read_fp8_model(const ModelDir& model_dir) {
    SourceModel model;
    model.dir = model_dir.path();
    model.format = "fp8";
    prequant::PackedReader reader(model_dir, model);
    const Fp8Config config = read_fp8_config(model_dir, reader);
    const std::string_view suffix = config.scale_suffix;
    for (const auto& file : model_dir.safetensors().files())
        for (const StTensorInfo& info : file->tensors()) {
            const prequant::Located where{file.get(), &info};
            const std::string& name = info.name;
            if (name.size() > suffix.size() && name.ends_with(suffix)) {
                read_fp8_module(reader, config, name.substr(0, name.size() - suffix.size()), where);
                continue;
            }
            // ModelBase.dequant_model drops the unused activation scales (ModelOpt's input, k and
            // v scales too).
            if (name.ends_with(".activation_scale") || name.ends_with("_activation_scale") ||
                (config.per_tensor && (name.ends_with(".input_scale") ||
                                       name.ends_with(".k_scale") || name.ends_with(".v_scale"))))
                continue;
            if (name.ends_with(".weight") &&
                reader.find(name.substr(0, name.size() - 7) + std::string(suffix)))
                continue;  // read with its scale
            if (info.dtype == StDtype::F8_E4M3) {
                const std::string scale =
                    (name.ends_with(".weight") ? name.substr(0, name.size() - 7) : name) +
                    std::string(suffix);
                reader.block(
                    name, where, "F8_E4M3 tensor has no scale (expected " + scale + ")",
                    "store the " + std::string(suffix.substr(1)) + " beside each FP8 weight");
                continue;
            }
            reader.add_float(where);
        }
    return model;
}

}  // namespace rebox
