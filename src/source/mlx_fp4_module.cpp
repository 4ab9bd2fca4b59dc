// read_fp4_module: the layout and value rules of an MLX mxfp4 / nvfp4 module (mlx_fp4_module.hpp).
#include "source/mlx_fp4_module.hpp"

#include <cstdio>

#include "format/shape_text.hpp"

namespace rebox::mlx {

std::optional<Fp4Kind> fp4_kind(const std::string& mode) {
    if (mode == "mxfp4") return Fp4Kind::mxfp4;
    if (mode == "nvfp4") return Fp4Kind::nvfp4;
    return std::nullopt;
}

int64_t fp4_group(Fp4Kind kind) { return kind == Fp4Kind::mxfp4 ? 32 : 16; }

const char* fp4_scale_problem(Fp4Kind kind, uint8_t byte) {
    if (kind == Fp4Kind::mxfp4) return byte == 0xff ? "E8M0 0xff is NaN" : nullptr;
    if ((byte & 0x7f) == 0x7f) return "E4M3 0x7f/0xff is NaN";
    if (byte & 0x80) return "E4M3 with the sign bit set is negative (ggml would drop the sign)";
    return nullptr;
}

std::optional<uint64_t> first_bad_fp4_scale(const Fp4View& v) {
    for (uint64_t i = 0; i < v.scales.size(); ++i)
        if (fp4_scale_problem(v.kind, v.scales[i])) return i;
    return std::nullopt;
}

void read_fp4_module(const std::string& module, Fp4Kind kind, const std::string& field,
                     const SafetensorsFile& weight_file, const StTensorInfo& weight,
                     const SafetensorsFile& scales_file, const StTensorInfo& scales,
                     bool has_biases, SourceModel& model) {
    using detail::shape_text;
    const std::string name = module + ".weight";
    const char* mode = kind == Fp4Kind::mxfp4 ? "mxfp4" : "nvfp4";
    const auto refuse = [&](const std::string& tensor, const SafetensorsFile& file,
                            const std::string& reason, const std::string& fix) {
        model.blockers.push_back(Blocker{tensor, file.display_name() + ": " + reason, fix});
    };
    const std::string layout_fix =
        std::string("re-export the module with mlx-lm (mode ") + mode + ": U32 weight, U8 scales)";
    if (has_biases) {
        refuse(module + ".biases", weight_file,
               std::string("mode ") + mode + " (" + field + ") stores no biases, but '" + module +
                   ".biases' exists",
               "remove the stray biases, or fix the mode in config.json");
        return;
    }
    if (weight.dtype != StDtype::U32) {
        refuse(name, weight_file,
               "dtype " + std::string(st_dtype_name(weight.dtype)) + " (expected U32 words of " +
                   mode + " codes)",
               layout_fix);
        return;
    }
    if (scales.dtype != StDtype::U8) {
        refuse(module + ".scales", scales_file,
               "dtype " + std::string(st_dtype_name(scales.dtype)) + " (expected U8 " +
                   (kind == Fp4Kind::mxfp4 ? "E8M0" : "E4M3") + " scale bytes for mode " + mode +
                   ")",
               layout_fix);
        return;
    }
    if (weight.shape.size() != 2 && weight.shape.size() != 3) {
        refuse(name, weight_file,
               "shape " + shape_text(weight.shape) +
                   " is neither 2-D nor stacked experts [E, rows, words]",
               layout_fix);
        return;
    }
    const std::vector<int64_t> lead(weight.shape.begin(), weight.shape.end() - 1);
    for (const int64_t d : lead)
        if (d < 1 || d > (int64_t{1} << 31)) {
            refuse(name, weight_file,
                   "shape " + shape_text(weight.shape) + " has an empty or huge dim", layout_fix);
            return;
        }
    const int64_t words = weight.shape.back();
    const int64_t group = fp4_group(kind);
    if (words < 1 || words > (int64_t{1} << 40)) {
        refuse(name, weight_file, "shape " + shape_text(weight.shape) + " has no codes",
               layout_fix);
        return;
    }
    const int64_t cols = words * 8;
    std::vector<int64_t> scale_shape = lead;
    scale_shape.push_back(cols / group);
    if (cols % group != 0 || scales.shape != scale_shape) {
        refuse(module + ".scales", scales_file,
               "shape " + shape_text(scales.shape) + " (expected " + shape_text(scale_shape) +
                   " for weight " + shape_text(weight.shape) + ": " + std::to_string(cols) +
                   " columns, group " + std::to_string(group) + " of mode " + mode + ")",
               layout_fix);
        return;
    }
    Fp4View view;
    view.kind = kind;
    view.group = group;
    view.codes = weight_file.data(weight);
    view.scales = scales_file.data(scales);
    if (const auto bad = first_bad_fp4_scale(view)) {
        char at[160];
        std::snprintf(at, sizeof at, "scale byte 0x%02x at index %llu: ", view.scales[*bad],
                      static_cast<unsigned long long>(*bad));
        refuse(module + ".scales", scales_file,
               at + std::string(fp4_scale_problem(kind, view.scales[*bad])),
               "re-export the checkpoint (a producer writes only finite, non-negative scales)");
        return;
    }
    SourceTensor tensor;
    tensor.name = name;
    tensor.shape = lead;
    tensor.shape.push_back(cols);
    tensor.file = weight_file.display_name();
    tensor.fp4 = view;
    model.tensors.push_back(std::move(tensor));
}

}  // namespace rebox::mlx
