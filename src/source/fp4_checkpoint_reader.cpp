// read_modelopt_nvfp4_model / read_ct_fp4_model: NVIDIA ModelOpt NVFP4 and compressed-tensors
// nvfp4-pack-quantized / mxfp4-pack-quantized checkpoints (docs/formats.md §2.2). Both store E2M1
// codes two per byte, element 2i in the low nibble (the bytes of an MLX fp4 word), and one scale
// byte per group along the row: ModelOpt P.weight U8 [out, in/2], P.weight_scale F8_E4M3 [out,
// in/16], P.weight_scale_2 F32 scalar (kept verbatim as the tensor's scale2), P.input_scale F32
// scalar (activation calibration, not needed for the weights; so are P.k_scale / P.v_scale, FP8
// KV-cache calibration); compressed-tensors P.weight_packed
// U8 [out, in/2] with P.weight_scale F8_E4M3 [out, in/16] and P.weight_global_scale F32 [1] g
// (the weight is E2M1 * s / g: scale2 = fl32(1/g), marked inexact when that differs from 1/g), or
// P.weight_scale U8 E8M0 [out, in/32] for mxfp4. A compressed-tensors mixed-precision
// checkpoint's FP8 modules (P.weight F8_E4M3 + P.weight_scale) are refused one BLOCKER each.
// Every refusal is a Blocker naming the tensor.
#include "source/fp4_checkpoint_reader.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "format/shape_text.hpp"
#include "prequant_common.hpp"
#include "rebox/error.hpp"
#include "source/mlx_fp4_module.hpp"
#include "source_helpers.hpp"

namespace rebox {
namespace {

using detail::shape_text;
using prequant::Located;

float load_f32(std::span<const uint8_t> bytes) {
    float f = 0;
    std::memcpy(&f, bytes.data(), sizeof f);  // little-endian host (as every reader assumes)
    return f;
}

class Fp4CheckpointReader {
  public:
    enum class Layout { modelopt, ct_nvfp4, ct_mxfp4 };

    Fp4CheckpointReader(const ModelDir& dir, SourceModel& model, Layout layout)
        : reader_(dir, model), layout_(layout) {}

    void run() {
        if (layout_ == Layout::modelopt) {
            // k_scale / v_scale: FP8 KV-cache calibration (kv_cache_quant_algo), which llama.cpp's
            // converter drops too (its KV cache type is a runtime choice).
            reader_.walk(
                {".weight"},
                {".weight_scale", ".weight_scale_2", ".input_scale", ".k_scale", ".v_scale"},
                [this](const std::string& module, const Located& where) {
                    if (!reader_.find(module + ".weight_scale"))
                        reader_.add_float(where);  // excluded module: a float weight
                    else
                        read_module(module, where);
                });
            return;
        }
        // A compressed-tensors mixed-precision checkpoint (unsloth's NVFP4 uploads) holds FP8
        // config groups beside the FP4 one: their modules are P.weight F8_E4M3 with
        // P.weight_scale (and P.input_scale), each one BLOCKER on P.weight.
        reader_.walk({".weight_packed", ".weight"},
                     {".weight_scale", ".weight_global_scale", ".input_global_scale",
                      ".weight_shape", ".input_scale"},
                     [this](const std::string& module, const Located& where) {
                         if (where.info->name.ends_with(".weight_packed"))
                             read_module(module, where);
                         else if (where.info->dtype == StDtype::F8_E4M3)
                             block_fp8_module(module, where);
                         else
                             add_float_module(module, where);
                     });
    }

  private:
    const char* origin() const {
        return layout_ == Layout::modelopt ? "ModelOpt" : "compressed-tensors";
    }

    // A per-tensor F32 scalar part ([] or [1]): its value, or a blocker.
    std::optional<float> scalar(const std::string& name, const Located& part) {
        const auto& shape = part.info->shape;
        const bool one = shape.empty() || (shape.size() == 1 && shape[0] == 1);
        if (part.info->dtype != StDtype::F32 || !one) {
            reader_.block(name, part,
                          part.info->name + " is " + std::string(st_dtype_name(part.info->dtype)) +
                              " " + shape_text(shape) + " (expected one F32 value per tensor)",
                          "use the checkpoint as its quantizer wrote it");
            return std::nullopt;
        }
        const float value = load_f32(part.file->data(*part.info));
        if (!std::isfinite(value) || !(value > 0)) {
            char text[64];
            std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
            reader_.block(
                name, part,
                part.info->name + " is " + text + " (expected a finite positive per-tensor scale)",
                "re-export the checkpoint (a quantizer writes amax-derived scales)");
            return std::nullopt;
        }
        return value;
    }

    // The FP8 module of a mixed-precision checkpoint: E4M3 codes times a scale per row (or block)
    // have no ggml block type, and rebox carries FP8 exactly (as F32) only from an all-FP8
    // checkpoint (docs/formats.md §6).
    void block_fp8_module(const std::string& module, const Located& weight) {
        const Located* scale = reader_.find(module + ".weight_scale");
        reader_.block(
            module + ".weight", weight,
            weight.info->name + " is F8_E4M3 " + shape_text(weight.info->shape) +
                (scale ? " with " + scale->info->name + " " +
                             std::string(st_dtype_name(scale->info->dtype)) + " " +
                             shape_text(scale->info->shape)
                       : std::string(" without a weight_scale")) +
                ": an FP8 module of a mixed-precision checkpoint (FP8 beside " + fp4_name() +
                "); no ggml block type holds E4M3 codes times their scales, and rebox carries "
                "FP8 (exactly, as F32) only from a checkpoint that is FP8 throughout",
            "convert the model's BF16 or all-FP8 release; llama.cpp's converter refuses a "
            "checkpoint with more than one config group too");
    }

    // A float P.weight of a compressed-tensors checkpoint; a quantization part beside it (a
    // weight_scale without weight_packed) is a stray one.
    void add_float_module(const std::string& module, const Located& weight) {
        for (const char* suffix :
             {".weight_scale", ".weight_global_scale", ".input_global_scale", ".weight_shape"})
            if (const Located* part = reader_.find(module + suffix))
                reader_.block_stray_part(*part, module + ".weight_packed");
        reader_.add_float(weight);
    }

    const char* fp4_name() const { return layout_ == Layout::ct_mxfp4 ? "MXFP4" : "NVFP4"; }

    void read_module(const std::string& module, const Located& weight) {
        const std::string name = module + ".weight";
        const bool mx = layout_ == Layout::ct_mxfp4;
        const Fp4Kind kind = mx ? Fp4Kind::mxfp4 : Fp4Kind::nvfp4;
        const int64_t group = mlx::fp4_group(kind);
        const auto& wshape = weight.info->shape;
        if (weight.info->dtype != StDtype::U8 || wshape.size() != 2 || wshape[0] < 1 ||
            wshape[1] < 1) {
            reader_.block(
                name, weight,
                weight.info->name + " is " + std::string(st_dtype_name(weight.info->dtype)) + " " +
                    shape_text(wshape) + " (expected U8 [out, in/2]: two E2M1 codes per byte)",
                "use the checkpoint as its quantizer wrote it");
            return;
        }
        const int64_t rows = wshape[0], cols = wshape[1] * 2;
        const Located* scales = reader_.require(
            module, ".weight_scale",
            std::string(mx ? "U8 E8M0" : "F8_E4M3") + " " + shape_text({rows, cols / group}));
        if (!scales) return;
        const std::string why = "for " + weight.info->name + " " + shape_text(wshape) + ": " +
                                std::to_string(cols) + " columns, one scale per " +
                                std::to_string(group);
        if (cols % group != 0) {
            reader_.block(name, weight,
                          std::to_string(cols) + " columns are not whole groups of " +
                              std::to_string(group) + " (" + (mx ? "mxfp4" : "nvfp4") + ")",
                          "use the checkpoint as its quantizer wrote it");
            return;
        }
        if (!reader_.expect(name, *scales, {mx ? StDtype::U8 : StDtype::F8_E4M3, StDtype::U8},
                            {rows, cols / group}, why))
            return;
        Fp4View view;
        view.kind = kind;
        view.group = group;
        view.origin = origin();
        view.codes = weight.file->data(*weight.info);
        view.scales = scales->file->data(*scales->info);
        if (const auto bad = mlx::first_bad_fp4_scale(view)) {
            char at[160];
            std::snprintf(at, sizeof at,
                          "%s byte 0x%02x at index %llu: ", scales->info->name.c_str(),
                          view.scales[*bad], static_cast<unsigned long long>(*bad));
            reader_.block(
                name, *scales, at + std::string(mlx::fp4_scale_problem(kind, view.scales[*bad])),
                "re-export the checkpoint (a quantizer writes only finite, non-negative scales)");
            return;
        }
        if (layout_ == Layout::modelopt) {
            const Located* s2 = reader_.require(module, ".weight_scale_2", "F32 scalar");
            if (!s2) return;
            const auto value = scalar(name, *s2);
            if (!value) return;
            view.scale2 = *value;
        } else if (layout_ == Layout::ct_nvfp4) {
            const Located* g = reader_.require(module, ".weight_global_scale", "F32 [1]");
            if (!g) return;
            const auto value = scalar(name, *g);
            if (!value) return;
            const float inverse = 1.0f / *value;  // the one float GGUF can hold for 1/g
            view.scale2 = inverse;
            view.scale2_error = std::fabs(static_cast<double>(inverse) * *value - 1.0);
            view.scale2_inexact = view.scale2_error != 0;
        }
        SourceTensor tensor;
        tensor.name = name;
        tensor.shape = {rows, cols};
        tensor.file = weight.file->display_name();
        tensor.fp4 = view;
        reader_.model().tensors.push_back(std::move(tensor));
    }

    prequant::PackedReader reader_;
    Layout layout_;
};

std::string json_string(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::optional<std::string> modelopt_quant_algo(const ModelDir& dir) {
    const std::filesystem::path side = dir.path() / "hf_quant_config.json";
    if (std::filesystem::exists(side)) {
        std::ifstream in(side);
        const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("quantization") ||
            !j["quantization"].is_object())
            throw_input_error(side.string(), "quantization",
                              "missing or malformed (expected ModelOpt's {\"quantization\": "
                              "{\"quant_algo\": ...}}); use the file ModelOpt wrote");
        return json_string(j["quantization"], "quant_algo");
    }
    if (dir.has_config() && prequant::quant_method(dir.config()) == "modelopt")
        return json_string(*prequant::quantization_config(dir.config()), "quant_algo");
    return std::nullopt;
}

std::optional<Fp4Kind> ct_fp4_format(const nlohmann::json& config) {
    const nlohmann::json* q = prequant::quantization_config(config);
    if (!q) return std::nullopt;
    const auto kind_of = [](const std::string& format) -> std::optional<Fp4Kind> {
        if (format == "nvfp4-pack-quantized") return Fp4Kind::nvfp4;
        if (format == "mxfp4-pack-quantized") return Fp4Kind::mxfp4;
        return std::nullopt;
    };
    // A mixed-precision checkpoint names each group's format; any FP4 group makes it this
    // reader's (its FP8 groups are refused per module).
    if (const auto groups = q->find("config_groups"); groups != q->end() && groups->is_object())
        for (const auto& [key, group] : groups->items())
            if (group.is_object())
                if (const auto kind = kind_of(json_string(group, "format"))) return kind;
    return kind_of(json_string(*q, "format"));
}

SourceModel read_modelopt_nvfp4_model(const ModelDir& model_dir) {
    const std::optional<std::string> algo = modelopt_quant_algo(model_dir);
    if (algo && *algo != "NVFP4")
        throw_input_error((model_dir.path() / "hf_quant_config.json").string(),
                          "quantization.quant_algo",
                          "'" + *algo +
                              "' is not supported (rebox reads ModelOpt NVFP4 checkpoints; mixed "
                              "precision and FP8 have no exact ggml type)");
    SourceModel model;
    model.dir = model_dir.path();
    model.format = "modelopt";
    Fp4CheckpointReader(model_dir, model, Fp4CheckpointReader::Layout::modelopt).run();
    return model;
}

SourceModel read_ct_fp4_model(const ModelDir& model_dir, Fp4Kind kind) {
    SourceModel model;
    model.dir = model_dir.path();
    model.format = "compressed-tensors";
    Fp4CheckpointReader(model_dir, model,
                        kind == Fp4Kind::nvfp4 ? Fp4CheckpointReader::Layout::ct_nvfp4
                                               : Fp4CheckpointReader::Layout::ct_mxfp4)
        .run();
    return model;
}

}  // namespace rebox
