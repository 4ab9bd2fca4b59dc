// check_requantized: the whole source tensor widened to F32 (verify's expected_from_float), in
// the GGUF's row order, then verify's own re-quantizer on the sampled or every block.
#include "requant_check.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "quant_check.hpp"
#include "ref_expected.hpp"
#include "ref_rope.hpp"

namespace rebox::verify_ref {
namespace {

// Values [0, out.size()) of one float source, widened in chunks.
void widen(const SourceTensor& source, std::span<float> out) {
    for (uint64_t first = 0; first < out.size(); first += kChunkValues) {
        const uint64_t count = std::min<uint64_t>(kChunkValues, out.size() - first);
        expected_from_float(source.float_dtype, source.float_data, first,
                            out.subspan(first, count));
    }
}

// The source values in the order the GGUF holds them.
std::vector<float> source_in_gguf_order(const ValueJob& job) {
    std::vector<float> values(job.values);
    if (job.experts.empty()) {
        widen(*job.source, values);
    } else {
        for (size_t e = 0; e < job.experts.size(); ++e)
            widen(*job.experts[e],
                  std::span<float>(values).subspan(e * job.expert_values, job.expert_values));
    }
    if (job.rope_head_rows == 0) return values;
    std::vector<float> permuted(values.size());
    const uint64_t rows = job.values / job.row_values;
    for (uint64_t row = 0; row < rows; ++row) {
        const uint64_t from = rope_source_row(row, job.rope_head_rows);
        std::copy_n(values.begin() + static_cast<ptrdiff_t>(from * job.row_values), job.row_values,
                    permuted.begin() + static_cast<ptrdiff_t>(row * job.row_values));
    }
    return permuted;
}

}  // namespace

void check_requantized(const ValueJob& job, uint64_t values_per_row, bool full,
                       TensorCheck& check) {
    check.requantized = true;
    const std::vector<float> source = source_in_gguf_order(job);
    QuantTensorInput input;
    input.gguf_name = check.gguf_name;
    input.ggml_type = job.gguf_type;
    input.source = source;
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
