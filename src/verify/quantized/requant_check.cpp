// check_requantized_tensors: each tensor's rows cut into work units (never across an expert, and
// whole rope head groups, so a unit's source rows are one contiguous range; deepseek2's kv_b_proj
// parts gather their rows from kv_b_proj's heads, and Qwen3.5's reordered value heads theirs from
// the source's value-head order), units taken by the threads in order, each
// checked row widened to F32 (verify's expected values of its source) into the thread's one-row
// buffer; the
// parts merge per tensor in row order, so the record does not depend on the thread count.
#include "verify/quantized/requant_check.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "verify/quantized/quant_check.hpp"
#include "verify/quantized/ref_quantize.hpp"
#include "verify/values/ref_expected.hpp"
#include "verify/values/ref_linear_attention.hpp"
#include "verify/values/ref_rope.hpp"

namespace rebox::verify_ref {
namespace {

// Values [first, first + out.size()) of one source, in chunks: a float source's widened; an FP8
// source's on the lossy path, its products rounded as the converter rounds them (fp8_source.hpp);
// a quantized source's (a tensor the exact file holds as its exact F16 / F32 copy, e.g. an mcq-v1
// kv_b_proj's attn_k_b or an NVFP4 expert stack of narrow rows) its exact values, as the exact
// value check computes them (the FP4 code -0 stays -0 in a float copy).
void widen(const SourceTensor& source, uint64_t first, std::span<float> out) {
    uint8_t codes[kChunkValues];
    for (uint64_t done = 0; done < out.size(); done += kChunkValues) {
        const uint64_t count = std::min<uint64_t>(kChunkValues, out.size() - done);
        const std::span<float> part = out.subspan(done, count);
        PrequantInexact unused;
        if (source.fp8)
            expected_from_fp8(source.fp8_source, first + done, part, unused);
        else if (source.prequant)
            expected_from_prequant(source.pq, first + done, part, unused);
        else if (source.fp4)
            expected_from_fp4(source.fp4_source, first + done, part, false);
        else if (source.quantized)
            expected_from_quantized(source.quant, first + done, std::span<uint8_t>(codes, count),
                                    part);
        else
            expected_from_float(source.float_dtype, source.float_data, first + done, part);
    }
}

// GGUF row `row` of the job's tensor from its source: the expert it lies in, and the source row
// llama's q/k permutation put there.
void widen_row(const ValueJob& job, uint64_t row, std::span<float> out) {
    const uint64_t row_values = out.size();
    const SourceTensor& source = *job.source;
    if (source.transposed_rows != 0) {  // Qwen3-VL-MoE's transposed experts: value by value
        for (uint64_t j = 0; j < row_values; ++j)
            widen(source, source.transposed_source_value(row * row_values + j), out.subspan(j, 1));
        return;
    }
    if (source.deinterleave != 0) {  // gpt-oss gate/up: every other row; fused experts: halves
        widen(source, source.deinterleaved_source_row(row) * row_values, out);
        return;
    }
    if (!job.experts.empty()) {
        const uint64_t rows_per_expert = job.expert_values / row_values;
        const uint64_t piece = row / rows_per_expert;
        widen(*job.experts[piece], job.piece_first(piece) + row % rows_per_expert * row_values,
              out);
        return;
    }
    const uint64_t stride = job.mla_nope + job.mla_v, rank = job.mla_rank;
    if (job.mla_part == 1) {  // attn_k_b row (head h, latent c): kv_b_proj's nope rows' column c
        const uint64_t h = row / rank, c = row % rank;
        for (uint64_t j = 0; j < row_values; ++j)
            widen(*job.source, (h * stride + j) * rank + c, out.subspan(j, 1));
        return;
    }
    if (job.mla_part == 2) {  // attn_v_b row: one of head h's v rows of kv_b_proj
        widen(*job.source, ((row / job.mla_v) * stride + job.mla_nope + row % job.mla_v) * rank,
              out);
        return;
    }
    if (job.vhead_value_heads != 0 && job.vhead_columns) {  // ssm_out: blocks of value columns
        for (uint64_t column = 0; column < row_values; column += job.vhead_unit) {
            const uint64_t from = v_head_source_column(column, job.vhead_key_heads,
                                                       job.vhead_value_heads, job.vhead_unit);
            widen(*job.source, row * row_values + from, out.subspan(column, job.vhead_unit));
        }
        return;
    }
    if (job.vhead_value_heads != 0) {  // attn_qkv / attn_gate / ssm_alpha / ssm_beta: value rows
        widen(*job.source,
              v_head_source_row(row, job.vhead_first, job.vhead_key_heads, job.vhead_value_heads,
                                job.vhead_unit) *
                  row_values,
              out);
        return;
    }
    const uint64_t from = job.rope_head_rows == 0 ? row : rope_source_row(row, job.rope_head_rows);
    widen(*job.source, from * row_values, out);
}

// The source rows GGUF rows [first, end) of a kv_b_proj part read: its heads' rows, whole.
std::pair<uint64_t, uint64_t> mla_source_rows(const ValueJob& job, uint64_t first, uint64_t end) {
    const uint64_t rows_per_head = job.mla_part == 1 ? job.mla_rank : job.mla_v;
    const uint64_t stride = job.mla_nope + job.mla_v;
    return {first / rows_per_head * stride, ((end - 1) / rows_per_head + 1) * stride};
}

// The bytes of source rows [first, end) of one float source (rows of row_values values).
std::span<const uint8_t> source_rows(const SourceTensor& source, uint64_t first, uint64_t end,
                                     uint64_t row_values) {
    if (source.element_count == 0) return {};
    const uint64_t value_bytes = source.float_data.size() / source.element_count;
    const uint64_t from =
        std::min<uint64_t>(first * row_values * value_bytes, source.float_data.size());
    const uint64_t to =
        std::min<uint64_t>(end * row_values * value_bytes, source.float_data.size());
    return source.float_data.subspan(from, to - from);
}

// The shapes the row-wise check relies on beyond quant_shape_problem: whole rows, experts of
// whole rows, the rope permutation's rows the GGUF's. "" when they hold.
std::string job_shape_problem(const RequantTask& task) {
    const ValueJob& job = *task.job;
    const uint64_t n = task.values_per_row;
    const std::string name = task.check->gguf_name;
    if (n == 0 || job.values % n != 0)
        return name + ": the source has " + std::to_string(job.values) +
               " values, not whole rows of " + std::to_string(n) +
               "; the source and GGUF shapes disagree";
    if (!job.experts.empty() && (job.expert_values == 0 || job.expert_values % n != 0))
        return name + ": an expert's " + std::to_string(job.expert_values) +
               " values are not whole rows of " + std::to_string(n) +
               "; the source and GGUF shapes disagree";
    if (job.mla_part == 1 && n != job.mla_nope)
        return name + ": rows of " + std::to_string(n) + " values, not kv_b_proj's " +
               std::to_string(job.mla_nope) + " nope values per head";
    if (job.mla_part == 2 && n != job.mla_rank)
        return name + ": rows of " + std::to_string(n) + " values, not kv_b_proj's " +
               std::to_string(job.mla_rank) + " latent values";
    if (job.source->deinterleave != 0 &&
        (job.source->deinterleave_row_values != n ||
         (job.source->deinterleave > 2 && job.source->deinterleave < 5 &&
          job.source->half_rows == 0)))
        return name + ": the fused source's rows of " +
               std::to_string(job.source->deinterleave_row_values) +
               " values are not the GGUF's rows of " + std::to_string(n);
    if (job.vhead_value_heads != 0 &&
        (job.row_values != n ||
         (job.vhead_columns && (job.vhead_unit == 0 || n % job.vhead_unit != 0))))
        return name + ": the value-head reorder's rows of " + std::to_string(job.row_values) +
               " values (blocks of " + std::to_string(job.vhead_unit) +
               ") do not fit the GGUF's rows of " + std::to_string(n);
    if (job.rope_head_rows != 0 && job.row_values != n)
        return name + ": the rope permutation's rows of " + std::to_string(job.row_values) +
               " values are not the GGUF's rows of " + std::to_string(n);
    return {};
}

// Row ranges of about kRequantUnitValues values; an expert's rows, and a rope head group's, stay
// in one unit.
void add_units(size_t task_index, const ValueJob& job, uint64_t rows, uint64_t row_values,
               std::vector<RequantChecker::Unit>& units) {
    const uint64_t per_unit = std::max<uint64_t>(1, kRequantUnitValues / row_values);
    const uint64_t rows_per_expert = job.experts.empty() ? rows : job.expert_values / row_values;
    for (uint64_t row = 0; row < rows;) {
        uint64_t end = std::min(rows, row + per_unit);
        end = std::min(end, (row / rows_per_expert + 1) * rows_per_expert);
        if (job.rope_head_rows != 0)
            end = std::min(
                rows, (end + job.rope_head_rows - 1) / job.rope_head_rows * job.rope_head_rows);
        units.push_back({task_index, row, end});
        row = end;
    }
}

}  // namespace

RequantChecker::RequantChecker(std::span<RequantTask> tasks, bool full,
                               std::span<const MappedFile* const> mappings)
    : tasks_(tasks), mappings_(mappings), shapes_(tasks.size()), checkable_(tasks.size(), false) {
    for (size_t t = 0; t < tasks.size(); ++t) {
        RequantTask& task = tasks[t];
        TensorCheck& check = *task.check;
        check.requantized = true;
        check.identical = false;
        const ValueJob& job = *task.job;
        QuantTensorShape& shape = shapes_[t];
        shape = {check.gguf_name, job.gguf_type, 0,   task.values_per_row,
                 task.importance, job.gguf_data, full};
        std::string problem = task.imatrix_problem;
        if (problem.empty()) problem = job_shape_problem(task);
        if (problem.empty()) {
            shape.rows = job.values / task.values_per_row;
            problem = quant_shape_problem(shape);
        }
        if (!problem.empty()) {
            check.problem = problem;
            continue;
        }
        checkable_[t] = true;
        add_units(t, job, shape.rows, task.values_per_row, units_);
    }
    parts_.resize(units_.size());
}

RequantChecker::ByteRange RequantChecker::unit_range(size_t u) const {
    const Unit& unit = units_[u];
    const ValueJob& job = *tasks_[unit.task].job;
    const uint64_t row_bytes = job.gguf_data.size() / shapes_[unit.task].rows;
    return {job.gguf_shard, job.gguf_file_offset + unit.first_row * row_bytes,
            job.gguf_file_offset + unit.end_row * row_bytes};
}

void RequantChecker::run_unit(size_t u) {
    thread_local std::vector<float> row_buffer;
    const Unit& unit = units_[u];
    const RequantTask& task = tasks_[unit.task];
    const QuantTensorShape& shape = shapes_[unit.task];
    const ValueJob& job = *task.job;
    const uint64_t n = task.values_per_row;
    row_buffer.resize(n);
    for (uint64_t row = unit.first_row; row < unit.end_row; ++row) {
        if (!quant_row_checked(shape, row)) continue;
        widen_row(job, row, row_buffer);
        check_quantized_row(shape, row, row_buffer, parts_[u]);
    }
    // The pages this unit read leave the resident set, as the value units' do.
    const std::span<const MappedFile* const> mappings = mappings_;
    const uint64_t row_bytes = job.gguf_data.size() / shape.rows;
    release_mapped(mappings, job.gguf_data.subspan(unit.first_row * row_bytes,
                                                   (unit.end_row - unit.first_row) * row_bytes));
    if (job.mla_part != 0) {
        const auto [first, end] = mla_source_rows(job, unit.first_row, unit.end_row);
        release_mapped(mappings, source_rows(*job.source, first, end, job.mla_rank));
    } else if (job.experts.empty()) {
        release_mapped(mappings, source_rows(*job.source, unit.first_row, unit.end_row, n));
    } else {
        const uint64_t rows_per_expert = job.expert_values / n;
        const uint64_t e = unit.first_row / rows_per_expert;
        const uint64_t skip = job.piece_first(e) / n;
        release_mapped(mappings,
                       source_rows(*job.experts[e], skip + unit.first_row - e * rows_per_expert,
                                   skip + unit.end_row - e * rows_per_expert, n));
    }
}

void RequantChecker::finish() {
    size_t first_unit = 0;
    for (size_t t = 0; t < tasks_.size(); ++t) {
        if (!checkable_[t]) continue;
        size_t end_unit = first_unit;
        while (end_unit < units_.size() && units_[end_unit].task == t) ++end_unit;
        const QuantTensorCheck result = merge_quant_rows(
            shapes_[t],
            std::span<const QuantRowsCheck>(parts_).subspan(first_unit, end_unit - first_unit));
        first_unit = end_unit;
        TensorCheck& check = *tasks_[t].check;
        check.blocks_total = result.blocks_total;
        check.blocks_checked = result.blocks_checked;
        check.blocks_identical = result.blocks_identical;
        check.rmse = result.rmse;
        check.max_abs_error = result.max_abs_error;
        check.identical = result.bytes_match();
        if (!check.identical) check.problem = describe(shapes_[t], result);
    }
}

void check_requantized_tensors(std::span<RequantTask> tasks, bool full, unsigned threads,
                               std::span<const MappedFile* const> mappings) {
    RequantChecker checker(tasks, full, mappings);
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;
    const auto work = [&] {
        try {
            for (size_t u; !failed && (u = next.fetch_add(1)) < checker.unit_count();)
                checker.run_unit(u);
        } catch (...) {
            std::lock_guard lock(error_mutex);
            if (!error) error = std::current_exception();
            failed = true;
        }
    };
    const size_t thread_count =
        std::min<size_t>(std::max(1u, threads), std::max<size_t>(1, checker.unit_count()));
    if (thread_count <= 1) {
        work();
    } else {
        std::vector<std::thread> pool;
        for (size_t i = 0; i < thread_count; ++i) pool.emplace_back(work);
        for (std::thread& thread : pool) thread.join();
    }
    if (error) std::rethrow_exception(error);
    checker.finish();
}

}  // namespace rebox::verify_ref
