// read_fp8_model (fp8_reader.hpp): the block size from quantization_config, then each
// weight_scale_inv paired with its F8_E4M3 weight, every length and shape checked before a byte
// is read, every code checked for NaN and every scale for a finite value.
#include "source/fp8_reader.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "format/shape_text.hpp"
#include "prequant_common.hpp"
#include "source/fp8_values.hpp"
#include "source_helpers.hpp"

namespace rebox {
namespace {

constexpr std::string_view kScaleInv = ".weight_scale_inv";
constexpr int64_t kMaxBlockSide = int64_t{1} << 20;

struct Fp8Config {
    int64_t block_rows = 0, block_cols = 0;
};

Fp8Config read_fp8_config(const ModelDir& model_dir, prequant::PackedReader& reader) {
    const nlohmann::json* q = prequant::quantization_config(model_dir.config());
    if (const auto fmt = q->find("fmt"); fmt != q->end() && *fmt != "e4m3")
        reader.block_config("quantization_config.fmt", "'" + fmt->dump() + "' is not supported",
                            "FP8 checkpoints in e4m3 (float8_e4m3fn)");
    const auto sizes = q->find("weight_block_size");
    if (sizes == q->end())
        reader.block_config("quantization_config.weight_block_size",
                            "is missing: per-tensor or per-channel FP8 scales are not supported",
                            "block-quantized FP8 (weight_block_size [128, 128])");
    Fp8Config config;
    if (sizes->is_array() && sizes->size() == 2 && (*sizes)[0].is_number_integer() &&
        (*sizes)[1].is_number_integer()) {
        config.block_rows = (*sizes)[0].get<int64_t>();
        config.block_cols = (*sizes)[1].get<int64_t>();
    }
    if (config.block_rows < 1 || config.block_cols < 1 || config.block_rows > kMaxBlockSide ||
        config.block_cols > kMaxBlockSide)
        reader.block_config("quantization_config.weight_block_size",
                            "'" + sizes->dump() + "' is not two block sides in 1..2^20",
                            "two positive integers, e.g. [128, 128]");
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
    v.block_rows = config.block_rows;
    v.block_cols = config.block_cols;
    const std::string why = "for " + name + " " + detail::shape_text(w.shape) + " in blocks of " +
                            std::to_string(v.block_rows) + "x" + std::to_string(v.block_cols);
    if (!reader.expect(name, *weight, {StDtype::F8_E4M3}, w.shape, "") ||
        !reader.expect(name, scale, {StDtype::F32, StDtype::BF16, StDtype::F16},
                       {v.scale_rows(), v.scale_cols()}, why))
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

SourceModel read_fp8_model(const ModelDir& model_dir) {
    SourceModel model;
    model.dir = model_dir.path();
    model.format = "fp8";
    prequant::PackedReader reader(model_dir, model);
    const Fp8Config config = read_fp8_config(model_dir, reader);
    for (const auto& file : model_dir.safetensors().files())
        for (const StTensorInfo& info : file->tensors()) {
            const prequant::Located where{file.get(), &info};
            const std::string& name = info.name;
            if (name.size() > kScaleInv.size() && name.ends_with(kScaleInv)) {
                read_fp8_module(reader, config, name.substr(0, name.size() - kScaleInv.size()),
                                where);
                continue;
            }
            // ModelBase.dequant_model drops the unused activation scales.
            if (name.ends_with(".activation_scale") || name.ends_with("_activation_scale"))
                continue;
            if (name.ends_with(".weight") &&
                reader.find(name.substr(0, name.size() - 7) + std::string(kScaleInv)))
                continue;  // read with its scale
            if (info.dtype == StDtype::F8_E4M3) {
                reader.block(name, where,
                             "F8_E4M3 tensor has no scale (expected " +
                                 (name.ends_with(".weight") ? name + "_scale_inv"
                                                            : name + ".weight_scale_inv") +
                                 ")",
                             "store the weight_scale_inv beside each FP8 weight");
                continue;
            }
            reader.add_float(where);
        }
    return model;
}

}  // namespace rebox
