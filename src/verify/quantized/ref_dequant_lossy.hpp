// verify's own dequantizers for the lossy types its re-quantizer covers (ref_quantize.hpp): the K
// types Q2_K..Q6_K, IQ4_NL, IQ4_XS, MXFP4, TQ1_0, TQ2_0, Q1_0 and Q2_0, rewritten from
// ggml-quants.c dequantize_row_* with the same binary32 operations in the same order (so the values
// are llama.cpp's, bit for bit), and the 32-value Q4_0..Q8_0 through ref_dequant. Used for the RMSE
// / max abs error of a quantized tensor against its source.
#pragma once

#include <cstdint>

namespace rebox::verify_ref {

// Writes the block's 32, 64, 128 or 256 values (ref_quant_layout gives which); false for another
// type.
bool dequantize_lossy_block(uint32_t ggml_type_id, const uint8_t* block, float* out);

}  // namespace rebox::verify_ref
