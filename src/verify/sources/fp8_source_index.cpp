// index_fp8_source (fp8_source_index.hpp): one entry per FP8 weight, bound to its scale after
// verify's own checks; every other tensor a plain entry; activation scales left out.
#include "verify/sources/fp8_source_index.hpp"

#include "rebox/error.hpp"
#include "verify/sources/prequant_parts.hpp"

namespace rebox::verify_ref {
namespace {

// Fills entry.fp8_source from the weight and its scale, or sets entry.problem.
void bind_fp8(const Part& weight, const Part& scale, const Fp8Layout& layout, SourceTensor& entry) {
    const StTensorInfo& w = *weight.info;
    const std::string& file = weight.file->display_name();
    if (w.dtype != StDtype::F8_E4M3 || w.shape.size() != 2 || w.shape[0] < 1 || w.shape[1] < 1) {
        entry.problem = error_message(
            file, w.name,
            "dtype " + std::string(st_dtype_name(w.dtype)) + ", shape " + shape_text(w.shape),
            "F8_E4M3 [out, in] beside " + scale.info->name);
        return;
    }
    Fp8Source f;
    f.rows = static_cast<uint64_t>(w.shape[0]);
    f.cols = static_cast<uint64_t>(w.shape[1]);
    f.block_rows = layout.per_tensor ? f.rows : layout.block_rows;
    f.block_cols = layout.per_tensor || layout.block_cols == 0 ? f.cols : layout.block_cols;
    f.scale_cols = (f.cols + f.block_cols - 1) / f.block_cols;
    const uint64_t scale_rows = (f.rows + f.block_rows - 1) / f.block_rows;
    // ModelOpt's one scale per weight is stored as [] or [1].
    const bool one =
        scale.info->shape.empty() || (scale.info->shape.size() == 1 && scale.info->shape[0] == 1);
    const std::vector<int64_t> want =
        layout.per_tensor ? (one ? scale.info->shape : std::vector<int64_t>{1})
                          : std::vector<int64_t>{static_cast<int64_t>(scale_rows),
                                                 static_cast<int64_t>(f.scale_cols)};
    if (!source_float(scale.info->dtype, &f.scale_dtype) || scale.info->shape != want) {
        entry.problem =
            error_message(scale.file->display_name(), scale.info->name,
                          "dtype " + std::string(st_dtype_name(scale.info->dtype)) + ", shape " +
                              shape_text(scale.info->shape),
                          "F32, BF16 or F16 " + shape_text(want) + " for " + w.name + " " +
                              shape_text(w.shape) + " in blocks of " +
                              std::to_string(f.block_rows) + "x" + std::to_string(f.block_cols));
        return;
    }
    f.codes = weight.file->data(w);
    f.scales = scale.file->data(*scale.info);
    const uint64_t width = f.scale_dtype == SourceFloat::F32 ? 4 : 2;
    if (f.codes.size() / f.cols != f.rows || f.codes.size() % f.cols != 0 ||
        f.scales.size() != scale_rows * f.scale_cols * width) {
        entry.problem = error_message(file, w.name, "data size disagrees with the shapes");
        return;
    }
    entry.fp8_source = f;
}

}  // namespace

SourceIndex index_fp8_source(const SafetensorsModel& model, const Fp8Layout& layout) {
    Parts parts;
    for (const auto& file : model.files())
        for (const StTensorInfo& info : file->tensors()) parts[info.name] = {file.get(), &info};
    SourceIndex index;
    for (const auto& [name, part] : parts) {
        if (name.ends_with(".activation_scale") || name.ends_with("_activation_scale")) continue;
        if (layout.per_tensor && (name.ends_with(".input_scale") || name.ends_with(".k_scale") ||
                                  name.ends_with(".v_scale")))
            continue;  // ModelOpt's activation and KV-cache scales: not weights
        SourceTensor entry;
        entry.name = name;
        entry.file = part.file->display_name();
        if (name.ends_with(".weight" + layout.scale_suffix)) {
            const std::string weight = name.substr(0, name.size() - layout.scale_suffix.size());
            if (find_part(parts, weight) == nullptr)
                index.problems.push_back(
                    error_message(entry.file, name, "has no FP8 weight " + weight + " beside it"));
            continue;
        }
        entry.shape = part.info->shape;
        entry.element_count = part.info->element_count();
        if (const Part* scale = find_part(parts, name + std::string(layout.scale_suffix))) {
            entry.quantized = true;
            entry.fp8 = true;
            bind_fp8(part, *scale, layout, entry);
        } else {
            bind_plain(*part.file, *part.info, entry);
        }
        index.entries.push_back(std::move(entry));
    }
    for (size_t i = 0; i < index.entries.size(); ++i) add_by_stripped_name(index, i);
    return index;
}

}  // namespace rebox::verify_ref
