// The checks shared by verify's GPTQ / AWQ / compressed-tensors binders (prequant_parts.hpp).
#include "verify/sources/prequant_parts.hpp"

#include "rebox/error.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {

const Part* find_part(const Parts& parts, const std::string& name) {
    const auto it = parts.find(name);
    return it == parts.end() ? nullptr : &it->second;
}

bool expect_part(const Part& part, std::initializer_list<StDtype> dtypes,
                 const std::vector<int64_t>& shape, const std::string& why, SourceTensor& entry) {
    bool dtype_ok = false;
    std::string dtype_names;
    for (StDtype d : dtypes) {
        dtype_ok |= part.info->dtype == d;
        if (!dtype_names.empty()) dtype_names += '/';
        dtype_names.append(st_dtype_name(d));
    }
    if (dtype_ok && part.info->shape == shape) return true;
    entry.problem = error_message(
        part.file->display_name(), part.name(),
        std::string(st_dtype_name(part.info->dtype)) + " " + shape_text(part.info->shape),
        dtype_names + " " + shape_text(shape) + (why.empty() ? std::string() : " (" + why + ")"));
    return false;
}

bool check_g_idx(const Part& part, uint64_t groups, SourceTensor& entry) {
    const std::span<const uint8_t> data = part.data();
    for (uint64_t k = 0; k < data.size() / 4; ++k) {
        const int32_t g = static_cast<int32_t>(load_u32le(data.data() + 4 * k));
        if (g < 0 || static_cast<uint64_t>(g) >= groups) {
            entry.problem = error_message(part.file->display_name(), part.name(),
                                          "value " + std::to_string(g) + " at input column " +
                                              std::to_string(k) + " is not a group",
                                          "0.." + std::to_string(groups - 1));
            return false;
        }
    }
    return true;
}

}  // namespace rebox::verify_ref
