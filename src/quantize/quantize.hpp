// The quantizers' internal entry points: argument validation, the scalar kernels for a whole
// tensor, the dispatcher that tries the lane kernels first, and dequantization. The public
// rebox::quantize_rows / rebox::dequantize_row call these; tests call them to force a path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "quantize/kernel_path.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox::quant {

// The 25 block types quantize_rows writes (Q4_0 ... MXFP4, NVFP4, TQ1_0, TQ2_0, Q1_0, Q2_0,
// IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S).
bool is_quantized_type(GgmlType type);
// Those plus F32, F16 and BF16.
bool is_dequantizable_type(GgmlType type);

// nrows x row size of (type, n_per_row), after checking the arguments; throws Error (input
// class) for an unsupported type, n_per_row not a positive multiple of the block size, a
// negative row count, or a size that overflows.
std::size_t checked_quantized_size(GgmlType type, int64_t nrows, int64_t n_per_row);
// ggml_quantize_requires_imatrix: IQ2_XXS, IQ2_XS and IQ1_S have no path without one.
bool requires_imatrix(GgmlType type);
// Throws Error (input class), llama-quantize's reason, when `type` requires an imatrix and it is
// null.
void check_imatrix_given(GgmlType type, const float* imatrix);
// Throws Error (input class) unless `type` dequantizes and n is a non-negative multiple of its
// block size.
void check_dequantize_args(GgmlType type, int64_t n);

// ggml_quantize_chunk(type, src, dst, 0, nrows, n_per_row, imatrix) with the scalar kernels.
// Arguments must already be valid (checked_quantized_size); returns the bytes written.
std::size_t quantize_rows_scalar(GgmlType type, const float* src, void* dst, int64_t nrows,
                                 int64_t n_per_row, const float* imatrix);

// Validates, then runs `path`'s lane kernel when it has one for (type, imatrix or not), else
// the scalar kernel. Every path writes the same bytes.
std::size_t quantize_rows_with(KernelPath path, GgmlType type, const float* src, void* dst,
                               int64_t nrows, int64_t n_per_row, const float* imatrix);

// ggml's dequantize_row_<type> for n values; arguments must be valid (check_dequantize_args).
void dequantize_row_scalar(GgmlType type, const void* src, float* dst, int64_t n);

}  // namespace rebox::quant
