// E4M3 decoding and the exact block product of an Fp8View (fp8_values.hpp).
#include "source/fp8_values.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "format/half.hpp"

namespace rebox {

double e4m3_to_double(uint8_t byte) {
    if (e4m3_is_nan(byte)) return std::numeric_limits<double>::quiet_NaN();
    const int exponent = (byte >> 3) & 0x0f;
    const int mantissa = byte & 0x07;
    // Subnormal: 0.m * 2^(1-7) = m * 2^-9; normal: 1.m * 2^(e-7) = (8 + m) * 2^(e-10).
    const double magnitude =
        exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
    return (byte & 0x80) ? -magnitude : magnitude;
}

const std::array<double, 256>& e4m3_table() {
    static const std::array<double, 256> table = [] {
        std::array<double, 256> values{};
        for (int b = 0; b < 256; ++b) values[b] = e4m3_to_double(static_cast<uint8_t>(b));
        return values;
    }();
    return table;
}

double fp8_scale(const Fp8View& v, int64_t br, int64_t bc) {
    const uint64_t g = static_cast<uint64_t>(br * v.scale_cols() + bc);
    if (v.scale_dtype == FloatDtype::F32) {
        float f;
        std::memcpy(&f, v.scales.data() + 4 * g, 4);
        return f;
    }
    uint16_t bits;
    std::memcpy(&bits, v.scales.data() + 2 * g, 2);
    return v.scale_dtype == FloatDtype::F16 ? half_to_float(bits) : bf16_to_float(bits);
}

double fp8_value(const Fp8View& v, uint64_t i) {
    const uint64_t cols = static_cast<uint64_t>(v.cols);
    const int64_t r = static_cast<int64_t>(i / cols), c = static_cast<int64_t>(i % cols);
    return e4m3_to_double(v.codes[i]) * fp8_scale(v, r / v.block_rows, c / v.block_cols);
}

void dequantize_fp8_f32(const Fp8View& v, uint64_t first, size_t count, float* out) {
    const uint64_t cols = static_cast<uint64_t>(v.cols),
                   block = static_cast<uint64_t>(v.block_cols);
    for (size_t k = 0; k < count;) {  // one run of values sharing a scale at a time
        const uint64_t i = first + k, r = i / cols, c = i % cols;
        const uint64_t run = std::min<uint64_t>(block - c % block, std::min(cols - c, count - k));
        const double scale =
            fp8_scale(v, static_cast<int64_t>(r) / v.block_rows, static_cast<int64_t>(c / block));
        const std::array<double, 256>& codes = e4m3_table();
        for (uint64_t j = 0; j < run; ++j)
            out[k + j] = static_cast<float>(codes[v.codes[i + j]] * scale);
        k += static_cast<size_t>(run);
    }
}

}  // namespace rebox
