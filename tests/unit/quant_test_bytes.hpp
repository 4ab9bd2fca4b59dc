// Little-endian byte builders and a QuantView over test-owned bytes, for the encode, plan and
// convert tests that assemble quantized tensors by hand.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "source/source_model.hpp"

namespace rebox::test {

// 16-bit patterns (fp16 / bf16 bits) as little-endian bytes.
inline std::vector<uint8_t> u16_le(const std::vector<uint16_t>& values) {
    std::vector<uint8_t> bytes;
    for (uint16_t v : values) bytes.insert(bytes.end(), {uint8_t(v), uint8_t(v >> 8)});
    return bytes;
}

// binary32 values as little-endian bytes (the host is little-endian, as rebox requires).
inline std::vector<uint8_t> f32_le(const std::vector<float>& values) {
    std::vector<uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

// A view of packed codes and scale/min bytes the caller keeps alive.
inline QuantView quant_view(int bits, int64_t group, std::span<const uint8_t> codes,
                            FloatDtype scale_dtype, std::span<const uint8_t> scales,
                            std::span<const uint8_t> mins) {
    QuantView q;
    q.bits = bits;
    q.group = group;
    q.codes = codes;
    q.scale_dtype = scale_dtype;
    q.scales = scales;
    q.mins = mins;
    return q;
}

}  // namespace rebox::test
