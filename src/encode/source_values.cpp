// source_values_f32: dispatches to the dequantization kernel of the tensor's view, or widens the
// stored fp16 / bf16 / binary32 values.
#include "encode/source_values.hpp"

#include <cstring>

#include "encode/block_encode.hpp"
#include "encode/fp4_block_encode.hpp"
#include "encode/int_block_encode.hpp"
#include "format/half.hpp"

namespace rebox {

void source_values_f32(const SourceTensor& tensor, uint64_t first, size_t count, float* out) {
    if (tensor.quant) {
        dequantize_f32(*tensor.quant, first, count, out);
        return;
    }
    if (tensor.fp4) {
        dequantize_fp4_f32(*tensor.fp4, first, count, out);
        return;
    }
    if (tensor.int_quant) {
        dequantize_int_f32(*tensor.int_quant, first, count, out);
        return;
    }
    const size_t width = float_dtype_size(tensor.float_dtype);
    const uint8_t* in = tensor.float_data.data() + first * width;
    for (size_t i = 0; i < count; ++i) {
        if (tensor.float_dtype == FloatDtype::F32) {
            std::memcpy(&out[i], in + i * 4, 4);
            continue;
        }
        uint16_t bits;
        std::memcpy(&bits, in + i * 2, 2);
        out[i] = tensor.float_dtype == FloatDtype::F16 ? half_to_float(bits) : bf16_to_float(bits);
    }
}

}  // namespace rebox
