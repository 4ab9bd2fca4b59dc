// The safetensors dtype names and element sizes (as the HF `safetensors` crate's Dtype enum).
#include <array>

#include "format/safetensors.hpp"

namespace rebox {

namespace {

struct DtypeEntry {
    StDtype dtype;
    std::string_view name;
    size_t size;
};

constexpr std::array<DtypeEntry, 15> kDtypes{{
    {StDtype::BOOL, "BOOL", 1},
    {StDtype::U8, "U8", 1},
    {StDtype::I8, "I8", 1},
    {StDtype::U16, "U16", 2},
    {StDtype::I16, "I16", 2},
    {StDtype::F16, "F16", 2},
    {StDtype::BF16, "BF16", 2},
    {StDtype::U32, "U32", 4},
    {StDtype::I32, "I32", 4},
    {StDtype::F32, "F32", 4},
    {StDtype::U64, "U64", 8},
    {StDtype::I64, "I64", 8},
    {StDtype::F64, "F64", 8},
    {StDtype::F8_E4M3, "F8_E4M3", 1},
    {StDtype::F8_E5M2, "F8_E5M2", 1},
}};

const DtypeEntry& entry_of(StDtype dtype) {
    for (const DtypeEntry& entry : kDtypes)
        if (entry.dtype == dtype) return entry;
    return kDtypes[0];  // unreachable for valid enum values
}

}  // namespace

std::optional<StDtype> st_dtype_from_name(std::string_view name) {
    for (const DtypeEntry& entry : kDtypes)
        if (entry.name == name) return entry.dtype;
    return std::nullopt;
}

std::string_view st_dtype_name(StDtype dtype) { return entry_of(dtype).name; }

size_t st_dtype_size(StDtype dtype) { return entry_of(dtype).size; }

uint64_t StTensorInfo::element_count() const {
    uint64_t count = 1;
    for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);  // validated not to overflow
    return count;
}

}  // namespace rebox
