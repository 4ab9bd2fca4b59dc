// Block dequantizers for `rebox diff`, written from ggml's block layouts (ggml-common.h) and
// dequantize_row_* (ggml-quants.c): F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0. Independent of
// verify/'s own dequantizers.
#pragma once

#include <cstdint>
#include <span>

#include "rebox/ggml_type.hpp"

namespace rebox {

// True when dequantize_elements() handles this ggml type id.
bool can_dequantize(GgmlType type);

// Dequantizes out.size() elements starting at element `first` of a tensor whose bytes are `data`
// (first and out.size() multiples of the type's block size; the caller checks bounds with
// ggml_nbytes). Returns false for types can_dequantize() rejects.
bool dequantize_elements(GgmlType type, std::span<const uint8_t> data, uint64_t first,
                         std::span<float> out);

}  // namespace rebox
