// bind_fp4_module: the layout checks of an MLX FP4 module as verify reads it (mlx_fp4_index.hpp).
#include "verify/sources/mlx_fp4_index.hpp"

#include <cstdio>

#include "rebox/error.hpp"

namespace rebox::verify_ref {

bool bind_fp4_module(const std::string& mode, int64_t bits, int64_t group, const std::string& field,
                     const std::string& module, const SafetensorsFile& weight_file,
                     const StTensorInfo& weight, const SafetensorsFile& scales_file,
                     const StTensorInfo& scales, bool has_biases, SourceTensor& entry) {
    const bool nvfp4 = mode == "nvfp4";
    if (!nvfp4 && mode != "mxfp4") return false;
    const int64_t mode_group = nvfp4 ? 16 : 32;
    const auto fail = [&](const std::string& tensor, const std::string& what,
                          const std::string& expected = "") {
        entry.problem = error_message(weight_file.display_name(), tensor, what, expected);
        return true;
    };
    if ((bits != 0 && bits != 4) || (group != 0 && group != mode_group))
        return fail(entry.name,
                    field + " bits " + std::to_string(bits) + ", group_size " +
                        std::to_string(group) + " with mode " + mode,
                    "bits 4, group_size " + std::to_string(mode_group));
    if (has_biases) return fail(module + ".biases", "present", "none (mode " + mode + ")");
    const std::vector<int64_t>& shape = weight.shape;
    bool dims_ok = weight.dtype == StDtype::U32 && (shape.size() == 2 || shape.size() == 3) &&
                   shape.back() >= 1 && shape.back() <= (int64_t{1} << 40);
    uint64_t rows = 1;
    for (size_t i = 0; dims_ok && i + 1 < shape.size(); ++i) {
        dims_ok = shape[i] >= 1 && shape[i] <= (int64_t{1} << 31);
        rows *= static_cast<uint64_t>(shape[i]);
    }
    const int64_t cols = dims_ok ? shape.back() * 8 : 0;
    if (!dims_ok || cols % mode_group != 0)
        return fail(entry.name, std::string(st_dtype_name(weight.dtype)) + " " + shape_text(shape),
                    "U32 [rows, cols/8] or [E, rows, cols/8]");
    std::vector<int64_t> scale_shape(shape.begin(), shape.end() - 1);
    scale_shape.push_back(cols / mode_group);
    if (scales.dtype != StDtype::U8 || scales.shape != scale_shape)
        return fail(module + ".scales",
                    std::string(st_dtype_name(scales.dtype)) + " " + shape_text(scales.shape),
                    "U8 " + shape_text(scale_shape));
    const std::span<const uint8_t> scale_bytes = scales_file.data(scales);
    for (size_t i = 0; i < scale_bytes.size(); ++i) {
        const uint8_t s = scale_bytes[i];
        const bool bad = nvfp4 ? (s & 0x80) != 0 || s == 0x7f : s == 0xff;
        if (bad) {
            char what[96];
            std::snprintf(what, sizeof what, "scale byte 0x%02x at index %zu", s, i);
            return fail(module + ".scales", what,
                        nvfp4 ? "a finite non-negative E4M3 byte (0x00..0x7e)"
                              : "a finite E8M0 byte (0x00..0xfe)");
        }
    }
    entry.shape.assign(shape.begin(), shape.end() - 1);
    entry.shape.push_back(cols);
    entry.element_count = rows * static_cast<uint64_t>(cols);
    entry.fp4 = true;
    entry.fp4_source =
        Fp4Source{nvfp4, static_cast<uint64_t>(mode_group), weight_file.data(weight), scale_bytes};
    return true;
}

}  // namespace rebox::verify_ref
