// verify's check of one GGUF tensor of a lossy type whose source is float (docs/design.md,
// "Verifying quantized tensors"): re-quantize the source with verify's own scalar quantizer
// (ref_quantize.hpp) on the sampled blocks (block_sample.hpp) or all of them, require the GGUF's
// bytes, and measure those blocks' GGUF values (verify's own dequantizers) against the source. A
// tensor is lossy by the user's choice, so the record never says "bit-identical"; it says whether
// the bytes are exactly what llama.cpp's quantizer writes for that source.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rebox::verify_ref {

struct QuantTensorInput {
    std::string_view gguf_name;
    uint32_t ggml_type = 0;
    // The source values as F32 (verify's own reading of the checkpoint), row after row.
    std::span<const float> source;
    uint64_t values_per_row = 0;  // ne[0]
    // The imatrix entry (empty: quantized without one): values_per_row floats for every row, or
    // values_per_row * experts for a 3-D tensor whose rows are grouped by expert (ne[1] rows each).
    std::span<const float> importance;
    std::span<const uint8_t> gguf_bytes;  // the tensor's data in the GGUF
    bool full = false;                    // every block instead of the sample
};

struct QuantTensorCheck {
    std::string problem;  // one line when the inputs cannot be checked (sizes, type); else empty
    uint64_t blocks_total = 0;
    uint64_t blocks_checked = 0;
    uint64_t blocks_identical = 0;
    uint64_t first_diff_block = std::numeric_limits<uint64_t>::max();
    uint32_t first_diff_byte = 0;         // within that block
    std::vector<uint8_t> expected_block;  // verify's bytes of the first differing block
    std::vector<uint8_t> got_block;       // the GGUF's
    // The GGUF's values (as llama.cpp dequantizes them) against the source, over the checked
    // blocks: exact with `full`, else the sample's estimate (its max is a lower bound). Measuring
    // every block would cost as much as quantizing the cheap types (bench/verify_quant_bench).
    double rmse = 0.0;
    double max_abs_error = 0.0;
    bool bytes_match() const { return problem.empty() && blocks_checked == blocks_identical; }
};

QuantTensorCheck check_quantized_tensor(const QuantTensorInput& input);

// The same check a row at a time, for callers that gather only the rows they check into a small
// buffer and spread a tensor's rows over threads (requant_check.hpp). `shape` is the input
// without its source: `rows` rows of values_per_row values.
struct QuantTensorShape {
    std::string_view gguf_name;
    uint32_t ggml_type = 0;
    uint64_t rows = 0;
    uint64_t values_per_row = 0;
    std::span<const float> importance;
    std::span<const uint8_t> gguf_bytes;
    bool full = false;
};
// The part of a check over some rows; parts merge in row order into a QuantTensorCheck.
struct QuantRowsCheck {
    uint64_t blocks_checked = 0;
    uint64_t blocks_identical = 0;
    uint64_t first_diff_block = std::numeric_limits<uint64_t>::max();
    uint32_t first_diff_byte = 0;
    std::vector<uint8_t> expected_block, got_block;
    double sum_squares = 0.0;
    double max_abs_error = 0.0;
};
// The sizes check of check_quantized_tensor: "" when the shape can be checked, else the line.
std::string quant_shape_problem(const QuantTensorShape& shape);
// Whether the check reads row `row` (it holds a sampled block, or `full`). The shape is valid.
bool quant_row_checked(const QuantTensorShape& shape, uint64_t row);
// Re-quantizes the checked blocks of row `row` (its source values) and compares them, adding to
// `part`. The shape is valid (quant_shape_problem empty) and row < rows.
void check_quantized_row(const QuantTensorShape& shape, uint64_t row, std::span<const float> values,
                         QuantRowsCheck& part);
// The record of a whole tensor from its parts in row order (problem empty).
QuantTensorCheck merge_quant_rows(const QuantTensorShape& shape,
                                  std::span<const QuantRowsCheck> parts);
// describe() of a check made a row at a time.
std::string describe(const QuantTensorShape& shape, const QuantTensorCheck& check);

// The one-line text of a record: "blk.0.attn_q.weight Q4_K: 12/12 sampled blocks identical to
// llama.cpp's quantizer, RMSE 1.2e-03, max abs error 8.1e-03", or the problem, or the first
// differing block and byte.
std::string describe(const QuantTensorInput& input, const QuantTensorCheck& check);

}  // namespace rebox::verify_ref
