// Small helpers of the adapter-neutral SourceModel types.
#include "source/source_model.hpp"

namespace rebox {

size_t float_dtype_size(FloatDtype dtype) { return dtype == FloatDtype::F32 ? 4 : 2; }

const char* float_dtype_name(FloatDtype dtype) {
    switch (dtype) {
        case FloatDtype::F32:
            return "F32";
        case FloatDtype::F16:
            return "F16";
        case FloatDtype::BF16:
            return "BF16";
    }
    return "?";
}

uint64_t SourceTensor::element_count() const {
    uint64_t count = 1;
    for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
    return count;
}

}  // namespace rebox
