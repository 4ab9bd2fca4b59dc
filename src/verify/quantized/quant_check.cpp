// check_quantized_tensor: sizes first (a hostile or truncated tensor is a problem line, never an
// out-of-range read), then each sampled (or every) block re-quantized and compared, and its GGUF
// values measured against the source.
#include "verify/quantized/quant_check.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "verify/quantized/block_sample.hpp"
#include "verify/quantized/ref_dequant_lossy.hpp"
#include "verify/quantized/ref_quantize.hpp"

namespace rebox::verify_ref {

namespace {

// The largest block of a type verify re-quantizes (Q6_K: 210 bytes; 256-value super-blocks).
constexpr uint32_t kMaxBlockBytes = 256;
constexpr uint32_t kMaxBlockValues = 256;

const char* type_name(uint32_t type) {
    const char* name = ref_quant_type_name(type);
    return name ? name : "an unsupported type";
}

// Rows the importance entry covers per slice (one slice, or one per expert), 0 without one.
uint64_t rows_per_slice(const QuantTensorShape& shape) {
    if (shape.importance.empty()) return 0;
    return shape.rows / (shape.importance.size() / shape.values_per_row);
}

uint64_t block_values_of(const QuantTensorShape& shape) {
    RefQuantLayout layout{};
    ref_quant_layout(shape.ggml_type, &layout);
    return layout.block_values;
}

}  // namespace

std::string quant_shape_problem(const QuantTensorShape& in) {
    RefQuantLayout layout{};
    const std::string name(in.gguf_name);
    if (!ref_quant_layout(in.ggml_type, &layout))
        return name + ": ggml type " + std::to_string(in.ggml_type) +
               " is not one verify re-quantizes";
    const std::string type = type_name(in.ggml_type);
    if (in.values_per_row == 0 || in.values_per_row % layout.block_values != 0)
        return name + ": rows of " + std::to_string(in.values_per_row) + " values cannot be " +
               type + " (" + std::to_string(layout.block_values) +
               "-value blocks); the GGUF's ne[0] or type is wrong";
    const uint64_t blocks_per_row = in.values_per_row / layout.block_values;
    const uint64_t rows = in.rows;
    if (rows > std::numeric_limits<uint64_t>::max() / blocks_per_row ||
        rows * blocks_per_row > std::numeric_limits<uint64_t>::max() / layout.block_bytes ||
        in.gguf_bytes.size() != rows * blocks_per_row * layout.block_bytes)
        return name + ": the GGUF holds " + std::to_string(in.gguf_bytes.size()) + " bytes, a " +
               type + " tensor of " + std::to_string(rows) + " x " +
               std::to_string(in.values_per_row) + " values needs " +
               std::to_string(rows * blocks_per_row * layout.block_bytes) +
               "; the file is truncated or the tensor's type or shape is wrong";
    if (in.importance.empty() && ref_quant_requires_importance(in.ggml_type))
        return name + ": " + type +
               " is quantized with an importance matrix only (ggml has no path without one), "
               "so verify needs the one it was made with; pass it with --imatrix FILE";
    if (!in.importance.empty()) {
        const uint64_t slices = in.importance.size() / in.values_per_row;
        if (in.importance.size() % in.values_per_row != 0 || slices == 0 || rows % slices != 0)
            return name + ": the imatrix entry has " + std::to_string(in.importance.size()) +
                   " values, not " + std::to_string(in.values_per_row) +
                   " per row (or per expert); use the imatrix made for this model";
        for (const float w : in.importance)
            if (!std::isfinite(w))
                return name +
                       ": the imatrix entry holds a value that is not finite; "
                       "recompute the imatrix";
    }
    return {};
}

bool quant_row_checked(const QuantTensorShape& shape, uint64_t row) {
    if (shape.full) return true;
    const uint64_t blocks_per_row = shape.values_per_row / block_values_of(shape);
    const uint64_t blocks_total = shape.rows * blocks_per_row;
    const uint64_t seed = sample_seed(shape.gguf_name);
    for (uint64_t b = row * blocks_per_row; b < (row + 1) * blocks_per_row; ++b)
        if (block_in_sample(b, blocks_total, blocks_per_row, seed)) return true;
    return false;
}

void check_quantized_row(const QuantTensorShape& in, uint64_t row, std::span<const float> values,
                         QuantRowsCheck& part) {
    RefQuantLayout layout{};
    ref_quant_layout(in.ggml_type, &layout);
    const uint64_t blocks_per_row = in.values_per_row / layout.block_values;
    const uint64_t blocks_total = in.rows * blocks_per_row;
    const uint64_t seed = sample_seed(in.gguf_name);
    const uint64_t slice_rows = rows_per_slice(in);
    const auto importance =
        slice_rows == 0
            ? std::span<const float>()
            : in.importance.subspan((row / slice_rows) * in.values_per_row, in.values_per_row);
    std::optional<QuantRow> quant_row;  // the row's statistic, once, when a block is checked
    uint8_t expected[kMaxBlockBytes];
    float decoded[kMaxBlockValues];
    for (uint64_t in_row = 0; in_row < blocks_per_row; ++in_row) {
        const uint64_t block = row * blocks_per_row + in_row;
        if (!in.full && !block_in_sample(block, blocks_total, blocks_per_row, seed)) continue;
        if (!quant_row) quant_row = make_quant_row(in.ggml_type, values, importance);
        ref_quantize_block(in.ggml_type, *quant_row, in_row,
                           std::span<uint8_t>(expected, layout.block_bytes));
        const uint8_t* got = in.gguf_bytes.data() + block * layout.block_bytes;
        ++part.blocks_checked;
        if (std::memcmp(expected, got, layout.block_bytes) == 0) {
            ++part.blocks_identical;
        } else if (part.first_diff_block == std::numeric_limits<uint64_t>::max()) {
            part.first_diff_block = block;
            uint32_t byte = 0;
            while (expected[byte] == got[byte]) ++byte;
            part.first_diff_byte = byte;
            part.expected_block.assign(expected, expected + layout.block_bytes);
            part.got_block.assign(got, got + layout.block_bytes);
        }
        // The GGUF's values of this block (as llama.cpp decodes them) against the source.
        dequantize_lossy_block(in.ggml_type, got, decoded);
        const float* source = values.data() + in_row * layout.block_values;
        for (uint32_t j = 0; j < layout.block_values; ++j) {
            const double error = std::fabs(static_cast<double>(decoded[j]) - source[j]);
            part.sum_squares += error * error;
            if (!(error <= part.max_abs_error)) part.max_abs_error = error;  // NaN sticks
        }
    }
}

QuantTensorCheck merge_quant_rows(const QuantTensorShape& shape,
                                  std::span<const QuantRowsCheck> parts) {
    QuantTensorCheck check;
    const uint64_t block_values = block_values_of(shape);
    check.blocks_total = shape.rows * (shape.values_per_row / block_values);
    double sum_squares = 0.0;
    for (const QuantRowsCheck& part : parts) {
        check.blocks_checked += part.blocks_checked;
        check.blocks_identical += part.blocks_identical;
        sum_squares += part.sum_squares;
        if (!(part.max_abs_error <= check.max_abs_error)) check.max_abs_error = part.max_abs_error;
        if (part.first_diff_block < check.first_diff_block) {
            check.first_diff_block = part.first_diff_block;
            check.first_diff_byte = part.first_diff_byte;
            check.expected_block = part.expected_block;
            check.got_block = part.got_block;
        }
    }
    if (check.blocks_checked > 0)
        check.rmse =
            std::sqrt(sum_squares / static_cast<double>(check.blocks_checked * block_values));
    return check;
}

QuantTensorCheck check_quantized_tensor(const QuantTensorInput& in) {
    QuantTensorShape shape{in.gguf_name,  in.ggml_type,  0,      in.values_per_row,
                           in.importance, in.gguf_bytes, in.full};
    QuantTensorCheck check;
    RefQuantLayout layout{};
    const bool rows_fit = ref_quant_layout(in.ggml_type, &layout) && in.values_per_row != 0 &&
                          in.values_per_row % layout.block_values == 0;
    if (rows_fit && in.source.size() % in.values_per_row != 0) {
        check.problem = std::string(in.gguf_name) + ": the source has " +
                        std::to_string(in.source.size()) + " values, not whole rows of " +
                        std::to_string(in.values_per_row) + "; the source and GGUF shapes disagree";
        return check;
    }
    shape.rows = rows_fit ? in.source.size() / in.values_per_row : 0;
    check.problem = quant_shape_problem(shape);
    if (!check.problem.empty()) return check;
    QuantRowsCheck part;
    for (uint64_t row = 0; row < shape.rows; ++row)
        if (quant_row_checked(shape, row))
            check_quantized_row(
                shape, row, in.source.subspan(row * in.values_per_row, in.values_per_row), part);
    return merge_quant_rows(shape, std::span<const QuantRowsCheck>(&part, 1));
}

std::string describe(const QuantTensorShape& in, const QuantTensorCheck& check) {
    const std::string head = std::string(in.gguf_name) + " " + type_name(in.ggml_type) + ": ";
    if (!check.problem.empty()) return check.problem;
    char errors[96];
    std::snprintf(errors, sizeof errors, ", RMSE %.3g, max abs error %.3g", check.rmse,
                  check.max_abs_error);
    const std::string which = in.full ? " blocks" : " sampled blocks";
    // errors are over the checked blocks: every block with full, else the sample's estimate
    if (check.bytes_match())
        return head + std::to_string(check.blocks_identical) + "/" +
               std::to_string(check.blocks_checked) + which +
               " identical to llama.cpp's quantizer" + errors;
    return head + std::to_string(check.blocks_checked - check.blocks_identical) + " of " +
           std::to_string(check.blocks_checked) + which +
           " differ from llama.cpp's quantizer, first block " +
           std::to_string(check.first_diff_block) + " at byte " +
           std::to_string(check.first_diff_byte) + errors;
}

std::string describe(const QuantTensorInput& in, const QuantTensorCheck& check) {
    const QuantTensorShape shape{in.gguf_name,  in.ggml_type,  0,      in.values_per_row,
                                 in.importance, in.gguf_bytes, in.full};
    return describe(shape, check);
}

}  // namespace rebox::verify_ref
