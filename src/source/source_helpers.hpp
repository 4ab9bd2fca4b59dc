// Small helpers the input adapters share: safetensors dtype -> float dtype, a float tensor as a
// SourceTensor, and the SourceModel a reader class fills.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "format/safetensors.hpp"
#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox::source_detail {

// F32/F16/BF16 as a FloatDtype; nullopt for every other safetensors dtype.
inline std::optional<FloatDtype> float_dtype(StDtype dtype) {
    switch (dtype) {
        case StDtype::F32:
            return FloatDtype::F32;
        case StDtype::F16:
            return FloatDtype::F16;
        case StDtype::BF16:
            return FloatDtype::BF16;
        default:
            return std::nullopt;
    }
}

// A float tensor of a safetensors file as a SourceTensor (dtype already checked to be a float).
inline SourceTensor float_tensor(const SafetensorsFile& file, const StTensorInfo& info,
                                 FloatDtype dtype) {
    SourceTensor tensor;
    tensor.name = info.name;
    tensor.shape = info.shape;
    tensor.file = file.display_name();
    tensor.float_dtype = dtype;
    tensor.float_data = file.data(info);
    return tensor;
}

// The SourceModel of `format` that Reader(model_dir, model).run() fills.
template <typename Reader>
SourceModel read_with(const ModelDir& model_dir, const char* format) {
    SourceModel model;
    model.dir = model_dir.path();
    model.format = format;
    Reader(model_dir, model).run();
    return model;
}

}  // namespace rebox::source_detail
