// values_fit_f16: dequantizes the tensor a chunk at a time with the same binary32 kernel the F32
// path writes, and stops at the first value fp16 cannot hold exactly.
#include <algorithm>

#include "quant_checks.hpp"
#include "rebox/encode/block_encode.hpp"
#include "rebox/format/half.hpp"

namespace rebox::plan_detail {

bool values_fit_f16(const QuantView& q, uint64_t n_values) {
    constexpr size_t kChunk = 8192;
    float values[kChunk];
    for (uint64_t done = 0; done < n_values;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, n_values - done));
        dequantize_f32(q, done, n, values);
        for (size_t i = 0; i < n; ++i)
            if (!float_to_half_exact(values[i], nullptr)) return false;
        done += n;
    }
    return true;
}

}  // namespace rebox::plan_detail
