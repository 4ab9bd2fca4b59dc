// The binary32 values of source tensors: the dequantization of each view (code*scale+min,
// (q-z)*s, E2M1*scale) and the widening of stored fp16 / bf16 / binary32 values.
#include "source/source_values.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "format/half.hpp"
#include "format/half_exact.hpp"
#include "rebox/error.hpp"
#include "source/fp8_values.hpp"
#include "source/int_quant_view.hpp"
#include "source/lsb0_unpack.hpp"

namespace rebox {
namespace {

constexpr size_t kChunkValues = 8192;  // codes unpacked per step: 8192 bytes of stack

inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

inline uint32_t load_u32(const uint8_t* p) {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

constexpr float kE2M1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

}  // namespace

float stored_float(FloatDtype dtype, std::span<const uint8_t> values, uint64_t g) {
    switch (dtype) {
        case FloatDtype::F16:
            return half_to_float(load_u16(values.data() + 2 * g));
        case FloatDtype::BF16:
            return bf16_to_float(load_u16(values.data() + 2 * g));
        case FloatDtype::F32: {
            const uint32_t bits = load_u32(values.data() + 4 * g);
            float f;
            std::memcpy(&f, &bits, 4);
            return f;
        }
    }
    return 0.0f;
}

uint8_t fp4_code_at(const Fp4View& v, uint64_t k) {
    const uint8_t byte = v.codes[k / 2];
    return k % 2 == 0 ? byte & 0x0f : byte >> 4;
}

float e2m1_value(uint8_t code) { return kE2M1[code & 0x0f]; }

float e8m0_value(uint8_t e) { return std::ldexp(1.0f, int{e} - 127); }

float e4m3_value(uint8_t byte) {
    const int exponent = (byte >> 3) & 0x0f;
    const int mantissa = byte & 0x07;
    if (exponent == 0) return std::ldexp(static_cast<float>(mantissa), -9);
    return std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
}

void dequantize_f32(const QuantView& q, uint64_t first, size_t count, float* out) {
    uint8_t codes[kChunkValues];
    const uint64_t group = static_cast<uint64_t>(q.group);
    for (size_t done = 0; done < count;) {
        const size_t chunk = std::min(kChunkValues, count - done);
        unpack_lsb0(q.codes, q.bits, first + done, chunk, codes);
        // Walk the chunk one group run at a time so scale and min are converted once per run.
        for (size_t i = 0; i < chunk;) {
            const uint64_t index = first + done + i;
            const uint64_t g = index / group;
            const size_t run =
                static_cast<size_t>(std::min<uint64_t>((g + 1) * group - index, chunk - i));
            const float scale = stored_float(q.scale_dtype, q.scales, g);
            const float min = stored_float(q.scale_dtype, q.mins, g);
            for (size_t k = 0; k < run; ++k)
                out[done + i + k] = static_cast<float>(codes[i + k]) * scale + min;
            i += run;
        }
        done += chunk;
    }
}

void dequantize_f16(const QuantView& q, uint64_t first, size_t count, uint16_t* out) {
    float values[kChunkValues];
    for (size_t done = 0; done < count;) {
        const size_t chunk = std::min(kChunkValues, count - done);
        dequantize_f32(q, first + done, chunk, values);
        for (size_t i = 0; i < chunk; ++i)
            if (!float_to_half_exact(values[i], out + done + i))
                throw Error(ExitClass::internal, "", "value " + std::to_string(first + done + i),
                            "not exactly representable as fp16 (expected the plan "
                            "to choose F32)");
        done += chunk;
    }
}

void dequantize_fp4_f32(const Fp4View& v, uint64_t first, size_t count, float* out) {
    for (size_t i = 0; i < count; ++i) {
        const uint64_t k = first + i;
        const uint8_t scale = v.scales[k / static_cast<uint64_t>(v.group)];
        const float d = v.kind == Fp4Kind::mxfp4 ? e8m0_value(scale) : e4m3_value(scale);
        out[i] = kE2M1[fp4_code_at(v, k)] * d;
    }
}

void dequantize_int_f32(const IntQuantView& v, uint64_t first, size_t count, float* out) {
    constexpr size_t kChunk = 4096;
    int16_t deltas[kChunk];
    const uint64_t cols = static_cast<uint64_t>(v.cols);
    for (size_t done = 0; done < count;) {
        const size_t n = std::min(kChunk, count - done);
        int_deltas(v, first + done, n, deltas);
        int64_t last_row = -1, last_group = -1;
        float s = 0;
        for (size_t i = 0; i < n; ++i) {
            const uint64_t index = first + done + i;
            const int64_t row = static_cast<int64_t>(index / cols);
            const int64_t g = int_group_of(v, static_cast<int64_t>(index % cols));
            if (row != last_row || g != last_group)
                s = int_scale(v, row, g), last_row = row, last_group = g;
            out[done + i] = static_cast<float>(deltas[i]) * s;
        }
        done += n;
    }
}

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
    if (tensor.fp8) {
        dequantize_fp8_f32(*tensor.fp8, first, count, out);
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
