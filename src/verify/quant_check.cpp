// check_quantized_tensor: sizes first (a hostile or truncated tensor is a problem line, never an
// out-of-range read), then each sampled (or every) block re-quantized and compared, and its GGUF
// values measured against the source.
#include "quant_check.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "block_sample.hpp"
#include "ref_dequant_lossy.hpp"
#include "ref_quantize.hpp"

namespace rebox::verify_ref {

namespace {

const char* type_name(uint32_t type) {
    const char* name = ref_quant_type_name(type);
    return name ? name : "an unsupported type";
}

std::string size_problem(const QuantTensorInput& in, const RefQuantLayout& layout) {
    const std::string name(in.gguf_name);
    const std::string type = type_name(in.ggml_type);
    if (in.values_per_row == 0 || in.values_per_row % layout.block_values != 0)
        return name + ": rows of " + std::to_string(in.values_per_row) + " values cannot be " +
               type + " (" + std::to_string(layout.block_values) +
               "-value blocks); the GGUF's ne[0] or type is wrong";
    if (in.source.size() % in.values_per_row != 0)
        return name + ": the source has " + std::to_string(in.source.size()) +
               " values, not whole rows of " + std::to_string(in.values_per_row) +
               "; the source and GGUF shapes disagree";
    const uint64_t rows = in.source.size() / in.values_per_row;
    const uint64_t blocks = rows * (in.values_per_row / layout.block_values);
    if (blocks > std::numeric_limits<uint64_t>::max() / layout.block_bytes ||
        in.gguf_bytes.size() != blocks * layout.block_bytes)
        return name + ": the GGUF holds " + std::to_string(in.gguf_bytes.size()) + " bytes, a " +
               type + " tensor of " + std::to_string(rows) + " x " +
               std::to_string(in.values_per_row) + " values needs " +
               std::to_string(blocks * layout.block_bytes) +
               "; the file is truncated or the tensor's type or shape is wrong";
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

}  // namespace

QuantTensorCheck check_quantized_tensor(const QuantTensorInput& in) {
    QuantTensorCheck check;
    RefQuantLayout layout{};
    if (!ref_quant_layout(in.ggml_type, &layout)) {
        check.problem = std::string(in.gguf_name) + ": ggml type " + std::to_string(in.ggml_type) +
                        " is not one verify re-quantizes";
        return check;
    }
    check.problem = size_problem(in, layout);
    if (!check.problem.empty()) return check;

    const uint64_t rows = in.source.size() / in.values_per_row;
    const uint64_t blocks_per_row = in.values_per_row / layout.block_values;
    const uint64_t slices = in.importance.empty() ? 1 : in.importance.size() / in.values_per_row;
    const uint64_t rows_per_slice = rows / slices;
    check.blocks_total = rows * blocks_per_row;
    const std::vector<uint64_t> sample =
        sample_blocks(check.blocks_total, blocks_per_row, sample_seed(in.gguf_name), in.full);

    std::vector<uint8_t> expected(layout.block_bytes);
    std::vector<float> decoded(layout.block_values);
    uint64_t current_row = std::numeric_limits<uint64_t>::max();
    QuantRow row;
    double sum_squares = 0.0;
    for (const uint64_t block : sample) {
        const uint64_t r = block / blocks_per_row;
        if (r != current_row) {  // the sample is sorted: each row's statistic is computed once
            const auto values = in.source.subspan(r * in.values_per_row, in.values_per_row);
            const auto importance =
                in.importance.empty()
                    ? std::span<const float>()
                    : in.importance.subspan((r / rows_per_slice) * in.values_per_row,
                                            in.values_per_row);
            row = make_quant_row(in.ggml_type, values, importance);
            current_row = r;
        }
        ref_quantize_block(in.ggml_type, row, block % blocks_per_row, expected);
        const uint8_t* got = in.gguf_bytes.data() + block * layout.block_bytes;
        ++check.blocks_checked;
        if (std::memcmp(expected.data(), got, layout.block_bytes) == 0) {
            ++check.blocks_identical;
        } else if (check.first_diff_block == std::numeric_limits<uint64_t>::max()) {
            check.first_diff_block = block;
            uint32_t byte = 0;
            while (expected[byte] == got[byte]) ++byte;
            check.first_diff_byte = byte;
            check.expected_block = expected;
            check.got_block.assign(got, got + layout.block_bytes);
        }
        // The GGUF's values of this block (as llama.cpp decodes them) against the source.
        dequantize_lossy_block(in.ggml_type, got, decoded.data());
        const float* source = in.source.data() + block * layout.block_values;
        for (uint32_t j = 0; j < layout.block_values; ++j) {
            const double error = std::fabs(static_cast<double>(decoded[j]) - source[j]);
            sum_squares += error * error;
            if (!(error <= check.max_abs_error)) check.max_abs_error = error;  // NaN sticks
        }
    }
    if (check.blocks_checked > 0)
        check.rmse = std::sqrt(sum_squares /
                               static_cast<double>(check.blocks_checked * layout.block_values));
    return check;
}

std::string describe(const QuantTensorInput& in, const QuantTensorCheck& check) {
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

}  // namespace rebox::verify_ref
