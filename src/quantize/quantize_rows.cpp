// rebox::quantize_rows / rebox::dequantize_row: placeholder until the kernels land (issue 22).
#include "rebox/rebox.hpp"

namespace rebox {

std::size_t quantize_rows(GgmlType type, const float*, void*, int64_t, int64_t, const float*) {
    throw Error(ExitClass::internal, "quantize_rows: " + ggml_type_name(type) + " not implemented yet");
}

void dequantize_row(GgmlType type, const void*, float*, int64_t) {
    throw Error(ExitClass::internal, "dequantize_row: " + ggml_type_name(type) + " not implemented yet");
}

}  // namespace rebox
