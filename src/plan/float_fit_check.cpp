// first_inexact_value: reads a tensor's binary32 values a chunk at a time (quantized: dequantized
// with the same kernel the F32 path writes, code*scale+min or (q-z)*s; float: widened exactly) and
// stops at the first value the target float type (fp16 or bf16) cannot hold exactly.
#include <algorithm>
#include <cstring>

#include "format/half.hpp"
#include "quant_checks.hpp"
#include "source/source_values.hpp"

namespace rebox::plan_detail {

std::optional<InexactValue> first_inexact_value(const SourceTensor& tensor, FitTarget target) {
    constexpr size_t kChunk = 8192;
    float values[kChunk];
    const uint64_t n_values = tensor.element_count();
    for (uint64_t done = 0; done < n_values;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, n_values - done));
        source_values_f32(tensor, done, n, values);
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
