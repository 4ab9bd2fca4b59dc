// verify's own re-quantizer for the lossy ggml types a quantized GGUF holds (Q4_0 Q4_1 Q5_0 Q5_1
// Q8_0 IQ4_NL MXFP4 in 32-value blocks; NVFP4, Q2_0, Q1_0 in 64 / 128; Q2_K Q3_K Q4_K Q5_K Q6_K
// IQ4_XS TQ1_0 TQ2_0 and the lattice i-quants IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ3_XXS IQ3_S in
// 256-value super-blocks), with and without an importance matrix. A scalar rewrite of what
// ggml_quantize_chunk computes (ggml-quants.c), sharing no code with the writer's fast kernels in
// quantize/: the check re-quantizes a block from the source values and requires the GGUF's bytes.
// One block at a time, so verify can check a sample of blocks (block_sample.hpp) or all of them.
#pragma once

#include <cstdint>
#include <span>

namespace rebox::verify_ref {

struct RefQuantLayout {
    uint32_t block_values;  // 32 or 256
    uint32_t block_bytes;
};

// The layout of a type verify can re-quantize (raw ggml type ids, as ref_dequant takes them).
bool ref_quant_layout(uint32_t ggml_type_id, RefQuantLayout* layout);
// Its name ("Q4_K"), or nullptr for a type verify does not re-quantize.
const char* ref_quant_type_name(uint32_t ggml_type_id);
// True for the types ggml quantizes only with an importance matrix (IQ2_XXS, IQ2_XS, IQ1_S:
// ggml_quantize_requires_imatrix); verify cannot re-derive them without the one they were made
// with.
bool ref_quant_requires_importance(uint32_t ggml_type_id);

// One row of a tensor about to be re-quantized: its values, its importance (the imatrix entry
// for this row, or for this row's expert in a 3-D tensor; empty: quantized without one) and the
// whole-row statistic ggml weighs Q4_0/Q4_1/Q5_0/Q5_1 with under importance (the mean square of
// the row; make_quant_row computes it once so each block does not re-read the row).
struct QuantRow {
    std::span<const float> values;
    std::span<const float> importance;
    float row_sigma2 = 0;
};

// values.size() must be a multiple of the type's block size and importance empty or the same
// size (the caller checks; verify reports a mismatch before it gets here).
QuantRow make_quant_row(uint32_t ggml_type_id, std::span<const float> values,
                        std::span<const float> importance);

// The bytes of block `block_index` of `row` in type `ggml_type_id` (out.size() == block_bytes).
void ref_quantize_block(uint32_t ggml_type_id, const QuantRow& row, uint64_t block_index,
                        std::span<uint8_t> out);

}  // namespace rebox::verify_ref
