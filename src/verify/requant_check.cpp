// check_requantized: the source rows the check reads (the sample's, or all with full) widened to
// F32 (verify's expected_from_float) in the GGUF's row order, then verify's own re-quantizer on
// the sampled or every block.
#include "requant_check.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "block_sample.hpp"
#include "quant_check.hpp"
#include "ref_expected.hpp"
#include "ref_quantize.hpp"
#include "ref_rope.hpp"

namespace rebox::verify_ref {
namespace {

// Values [first, first + out.size()) of one float source, widened in chunks.
void widen(const SourceTensor& source, uint64_t first, std::span<float> out) {
    for (uint64_t done = 0; done < out.size(); done += kChunkValues) {
        const uint64_t count = std::min<uint64_t>(kChunkValues, out.size() - done);
        expected_from_float(source.float_dtype, source.float_data, first + done,
                            out.subspan(done, count));
    }
}

// GGUF row `row` of the job's tensor (row_values values) from its source: the expert it lies in,
// and the source row llama's q/k permutation put there.
void widen_row(const ValueJob& job, uint64_t row, uint64_t row_values, std::span<float> values) {
    const std::span<float> out = values.subspan(row * row_values, row_values);
    if (!job.experts.empty()) {
        const uint64_t rows_per_expert = job.expert_values / row_values;
        widen(*job.experts[row / rows_per_expert], row % rows_per_expert * row_values, out);
        return;
    }
    const uint64_t from = job.rope_head_rows == 0 ? row : rope_source_row(row, job.rope_head_rows);
    widen(*job.source, from * row_values, out);
}

// The source values in the order the GGUF holds them, in a buffer of the whole tensor's size of
// which only the rows the check reads are written: with the sample, the rows of its blocks (the
// pages of the other rows are never touched, so they never become resident); else every row.
// check_quantized_tensor reads only the rows of the blocks it checks (the same sample_blocks).
std::unique_ptr<float[]> source_in_gguf_order(const ValueJob& job, std::string_view name,
                                              uint64_t row_values, bool full) {
    std::unique_ptr<float[]> buffer(new float[job.values]);
    const std::span<float> values(buffer.get(), job.values);
    RefQuantLayout layout{};
    if (row_values == 0 || job.values % row_values != 0 ||
        (!job.experts.empty() && job.expert_values % row_values != 0) ||
        (job.rope_head_rows != 0 && job.row_values != row_values) ||
        !ref_quant_layout(job.gguf_type, &layout) || row_values % layout.block_values != 0) {
        // Shapes the check refuses (it reports the problem): the values in plain order.
        std::fill(values.begin(), values.end(), 0.0f);
        return buffer;
    }
    const uint64_t rows = job.values / row_values;
    if (full) {
        for (uint64_t row = 0; row < rows; ++row) widen_row(job, row, row_values, values);
        return buffer;
    }
    const uint64_t blocks_per_row = row_values / layout.block_values;
    uint64_t last_row = std::numeric_limits<uint64_t>::max();
    for (const uint64_t block :
         sample_blocks(rows * blocks_per_row, blocks_per_row, sample_seed(name), false)) {
        if (block / blocks_per_row == last_row) continue;
        last_row = block / blocks_per_row;
        widen_row(job, last_row, row_values, values);
    }
    return buffer;
}

}  // namespace

void check_requantized(const ValueJob& job, uint64_t values_per_row, bool full,
                       TensorCheck& check) {
    check.requantized = true;
    const std::unique_ptr<float[]> source =
        source_in_gguf_order(job, check.gguf_name, values_per_row, full);
    QuantTensorInput input;
    input.gguf_name = check.gguf_name;
    input.ggml_type = job.gguf_type;
    input.source = std::span<const float>(source.get(), job.values);
    input.values_per_row = values_per_row;
    input.gguf_bytes = job.gguf_data;
    input.full = full;
    const QuantTensorCheck result = check_quantized_tensor(input);
    check.blocks_total = result.blocks_total;
    check.blocks_checked = result.blocks_checked;
    check.blocks_identical = result.blocks_identical;
    check.rmse = result.rmse;
    check.max_abs_error = result.max_abs_error;
    check.identical = result.bytes_match();
    if (!check.identical) check.problem = describe(input, result);
}

}  // namespace rebox::verify_ref
