// first_inexact_value: reads a tensor's binary32 values a chunk at a time (quantized: dequantized
// with the same kernel the F32 path writes, code*scale+min or (q-z)*s; float: widened exactly) and
// stops at the first value the target float type (fp16 or bf16) cannot hold exactly.
#include <algorithm>
#include <cstring>

#include "encode/block_encode.hpp"
#include "encode/int_block_encode.hpp"
#include "format/half.hpp"
#include "quant_checks.hpp"

namespace rebox::plan_detail {

void float_values(const SourceTensor& tensor, uint64_t first, size_t count, float* out) {
    if (tensor.quant) {
        dequantize_f32(*tensor.quant, first, count, out);
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

std::optional<InexactValue> first_inexact_value(const SourceTensor& tensor, FitTarget target) {
    constexpr size_t kChunk = 8192;
    float values[kChunk];
    const uint64_t n_values = tensor.element_count();
    for (uint64_t done = 0; done < n_values;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, n_values - done));
        float_values(tensor, done, n, values);
        for (size_t i = 0; i < n; ++i) {
            const bool exact = target == FitTarget::f16 ? float_to_half_exact(values[i], nullptr)
                                                        : float_to_bf16_exact(values[i], nullptr);
            if (!exact) return InexactValue{done + i, values[i]};
        }
        done += n;
    }
    return std::nullopt;
}

}  // namespace rebox::plan_detail
