// The source side of the proof: the values a GGUF tensor must hold, computed from the source tensor
// alone. mcq-v1 quantized: w[i] = float(c[i]) * float(scale[i/group]) + float(min[i/group]) in
// binary32 (spec; the product is exact for bits <= 8, one rounding in the add). MLX affine is the
// same formula (scale, bias) with F16/BF16/F32 parameters widened exactly to binary32 (issue 8:
// "q*scale + bias evaluated once in fp32"). Float sources: their values widened to binary32.
#pragma once

#include <cstdint>
#include <span>

#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {

inline float mcq_value(uint8_t code, float scale, float min) {
    return static_cast<float>(code) * scale + min;
}

enum class SourceFloat { F32, F16, BF16 };

struct QuantView {
    std::span<const uint8_t> qcodes;  // the lsb0 stream
    std::span<const uint8_t> scales;  // param_dtype little-endian, one per group
    std::span<const uint8_t> mins;    // param_dtype little-endian, one per group (MLX: biases)
    unsigned bits = 0;
    uint64_t group = 0;
    SourceFloat param_dtype = SourceFloat::F16;  // mcq-v1: always F16
};

// Values first .. first+out.size()-1; codes is scratch of at least out.size() bytes.
void expected_from_quantized(const QuantView& source, uint64_t first, std::span<uint8_t> codes,
                             std::span<float> out);

// True when values first .. first+count-1 of `source` have the same 32-bit patterns as the Q4_1
// `blocks` holding them (count / 32 blocks), found without storing either side (AVX2 path, whole
// groups, codes of 1..4 bits). False when some value differs or that path does not apply here:
// the caller then computes both sides and compares them value by value.
bool quantized_equals_q4_1(const QuantView& source, uint64_t first, uint64_t count,
                           std::span<const uint8_t> blocks);

// Values first .. first+out.size()-1 of a float source tensor with raw bytes `data`.
void expected_from_float(SourceFloat dtype, std::span<const uint8_t> data, uint64_t first,
                         std::span<float> out);

}  // namespace rebox::verify_ref
