// Work units over all matched tensors (scheduled as their bytes are written, or all at once), a
// std::thread pool pulling ready units, and the per-chunk expected-vs-read-back comparison (a float
// kept in its type first tries a plain byte compare; every chunk first compares the two fp32
// arrays in bulk, and only a differing chunk is scanned value by value for the first mismatch;
// mcq-v1 / MLX values carried as Q4_1 are compared in registers first, both sides computed there).
// Finished units release the mapped pages they read.
#include "verify/values/value_checks.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "verify/values/ref_dequant.hpp"
#include "verify/values/ref_linear_attention.hpp"
#include "verify/values/ref_norm_shift.hpp"
#include "verify/values/ref_rope.hpp"

namespace rebox::verify_ref {
namespace {

constexpr uint32_t kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ4_1 = 3, kGgmlBF16 = 30, kGgmlMXFP4 = 39,
                   kGgmlNVFP4 = 40;  // ggml type ids (ggml.h)

bool same_float_type(uint32_t gguf_type, SourceFloat dtype) {
    switch (dtype) {
        case SourceFloat::F32:
            return gguf_type == kGgmlF32;
        case SourceFloat::F16:
            return gguf_type == kGgmlF16;
        case SourceFloat::BF16:
            return gguf_type == kGgmlBF16;
    }
    return false;
}

std::span<const uint8_t> clipped(std::span<const uint8_t> bytes, uint64_t begin, uint64_t end) {
    end = std::min<uint64_t>(end, bytes.size());
    if (begin >= end) return {};
    return bytes.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
}

uint64_t source_float_width(SourceFloat dtype) { return dtype == SourceFloat::F32 ? 4 : 2; }

// Expected values [begin, begin+out.size()) of the GGUF tensor: the source's values at the same
// index, or for a permuted tensor at the same place of the source row that GGUF row holds.
void fill_from(const SourceTensor& source, uint64_t source_first, std::span<uint8_t> codes,
               std::span<float> part, CompareResult& result, uint32_t gguf_type) {
    if (source.prequant) {
        PrequantInexact inexact;
        expected_from_prequant(source.pq, source_first, part, inexact);
        if (inexact.index < result.source_inexact_index) {
            result.source_inexact_index = inexact.index;
            result.source_inexact_value = inexact.value;
        }
    } else if (source.fp8) {
        PrequantInexact inexact;
        expected_from_fp8(source.fp8_source, source_first, part, inexact);
        if (inexact.index < result.source_inexact_index) {
            result.source_inexact_index = inexact.index;
            result.source_inexact_value = inexact.value;
        }
    } else if (source.fp4)
        expected_from_fp4(source.fp4_source, source_first, part,
                          gguf_type == kGgmlMXFP4 || gguf_type == kGgmlNVFP4);
    else if (source.quantized)
        expected_from_quantized(source.quant, source_first, codes, part);
    else
        expected_from_float(source.float_dtype, source.float_data, source_first, part);
}

void expected_values(const ValueJob& job, uint64_t begin, std::span<uint8_t> codes,
                     std::span<float> out, CompareResult& result) {
    const SourceTensor& source = *job.source;
    const auto fill = [&](uint64_t source_first, std::span<float> part) {
        fill_from(source, source_first + job.source_skip, codes, part, result, job.gguf_type);
    };
    if (source.transposed_rows != 0) {  // Qwen3-VL-MoE's transposed experts: value by value
        for (size_t k = 0; k < out.size(); ++k)
            fill(source.transposed_source_value(begin + k), out.subspan(k, 1));
        return;
    }
    if (source.deinterleave != 0) {  // gpt-oss gate/up: every other row; fused experts: halves
        const uint64_t width = source.deinterleave_row_values;
        for (size_t k = 0; k < out.size();) {
            const uint64_t index = begin + k;
            const uint64_t row = index / width, column = index % width;
            const size_t run =
                static_cast<size_t>(std::min<uint64_t>(width - column, out.size() - k));
            fill(source.deinterleaved_source_row(row) * width + column, out.subspan(k, run));
            k += run;
        }
        return;
    }
    if (!job.experts.empty()) {  // expert e's values, in order, at [e*V, (e+1)*V)
        for (size_t k = 0; k < out.size();) {
            const uint64_t index = begin + k;
            const uint64_t expert = index / job.expert_values, at = index % job.expert_values;
            const size_t run =
                static_cast<size_t>(std::min<uint64_t>(job.expert_values - at, out.size() - k));
            fill_from(*job.experts[expert], job.piece_first(expert) + at, codes,
                      out.subspan(k, run), result, job.gguf_type);
            k += run;
        }
        return;
    }
    if (job.mla_part != 0) {  // a part of kv_b_proj, each run from its source place
        const uint64_t stride = job.mla_nope + job.mla_v, rank = job.mla_rank;
        for (size_t k = 0; k < out.size();) {
            const uint64_t index = begin + k;
            uint64_t from = 0, left = 1;
            if (job.mla_part == 1) {  // attn_k_b: one value at a time (a transpose)
                const uint64_t j = index % job.mla_nope, c = index / job.mla_nope % rank,
                               h = index / (job.mla_nope * rank);
                from = (h * stride + j) * rank + c;
            } else {  // attn_v_b: the rest of a v row
                const uint64_t row = index / rank, column = index % rank;
                from =
                    ((row / job.mla_v) * stride + job.mla_nope + row % job.mla_v) * rank + column;
                left = rank - column;
            }
            const size_t run = static_cast<size_t>(std::min<uint64_t>(left, out.size() - k));
            fill(from, out.subspan(k, run));
            k += run;
        }
        return;
    }
    if (job.norm_plus_one) {
        fill(begin, out);
        return add_one_as_converter(source.float_dtype, out);
    }
    if (job.vhead_value_heads != 0) {  // value heads moved: each run from its source place
        for (size_t k = 0; k < out.size();) {
            const uint64_t index = begin + k;
            const uint64_t row = index / job.row_values, column = index % job.row_values;
            uint64_t from = 0, left = 0;
            if (job.vhead_columns) {
                from = row * job.row_values + v_head_source_column(column, job.vhead_key_heads,
                                                                   job.vhead_value_heads,
                                                                   job.vhead_unit);
                left = job.vhead_unit - column % job.vhead_unit;
            } else {
                from = v_head_source_row(row, job.vhead_first, job.vhead_key_heads,
                                         job.vhead_value_heads, job.vhead_unit) *
                           job.row_values +
                       column;
                left = job.row_values - column;
            }
            const size_t run = static_cast<size_t>(std::min<uint64_t>(left, out.size() - k));
            fill(from, out.subspan(k, run));
            k += run;
        }
        if (job.neg_exp) neg_exp_as_converter(source.float_dtype, out);
        return;
    }
    if (job.neg_exp) {
        fill(begin, out);
        return neg_exp_as_converter(source.float_dtype, out);
    }
    if (job.rope_head_rows == 0) return fill(begin, out);
    for (size_t k = 0; k < out.size();) {
        const uint64_t index = begin + k;
        const uint64_t row = index / job.row_values, column = index % job.row_values;
        const size_t run =
            static_cast<size_t>(std::min<uint64_t>(job.row_values - column, out.size() - k));
        fill(rope_source_row(row, job.rope_head_rows) * job.row_values + column,
             out.subspan(k, run));
        k += run;
    }
}

// Appends the source byte ranges values [first, last) of `source` read (codes, scales, mins or the
// float data), clipped to the arrays.
void append_source_bytes(const SourceTensor& source, uint64_t first, uint64_t last,
                         std::vector<std::span<const uint8_t>>& parts) {
    if (!source.quantized) {
        const uint64_t width = source_float_width(source.float_dtype);
        parts.push_back(clipped(source.float_data, first * width, last * width));
        return;
    }
    if (source.fp8) {  // one code byte per value; the scales of the rows the range touches
        const Fp8Source& f = source.fp8_source;
        parts.push_back(clipped(f.codes, first, last));
        const uint64_t width = f.scale_dtype == SourceFloat::F32 ? 4 : 2;
        const uint64_t row_first = first / f.cols / f.block_rows,
                       row_end = (last - 1) / f.cols / f.block_rows + 1;
        parts.push_back(
            clipped(f.scales, row_first * f.scale_cols * width, row_end * f.scale_cols * width));
        return;
    }
    if (source.fp4) {
        const Fp4Source& f = source.fp4_source;
        parts.push_back(clipped(f.codes, first / 2, (last + 1) / 2));
        parts.push_back(clipped(f.scales, first / f.group, (last + f.group - 1) / f.group));
        return;
    }
    const QuantView& q = source.quant;
    const uint64_t group = std::max<uint64_t>(q.group, 1);
    const uint64_t group_begin = first / group, group_end = (last + group - 1) / group;
    parts.push_back(clipped(q.qcodes, first * q.bits / 8, (last * q.bits + 7) / 8));
    parts.push_back(clipped(q.scales, 2 * group_begin, 2 * group_end));
    parts.push_back(clipped(q.mins, 2 * group_begin, 2 * group_end));
}

}  // namespace

void compare_range(const ValueJob& job, uint64_t first, uint64_t count, std::span<float> expected,
                   std::span<float> got, std::span<uint8_t> codes, CompareResult& result) {
    const SourceTensor& source = *job.source;
    // A float source kept in its own type: equal bytes are equal values (each 16-bit pattern
    // widens to exactly one binary32 pattern), so one bulk compare settles the chunk; only a
    // chunk that differs is widened and scanned for its first mismatch.
    const uint64_t same_width = source.quantized || source.prequant || job.rope_head_rows != 0 ||
                                        source.deinterleave != 0 || source.transposed_rows != 0 ||
                                        !job.experts.empty() || job.norm_plus_one || job.neg_exp ||
                                        job.vhead_value_heads != 0 || job.mla_part != 0
                                    ? 0
                                : same_float_type(job.gguf_type, source.float_dtype)
                                    ? source_float_width(source.float_dtype)
                                    : 0;
    // An mcq-v1 / MLX tensor carried as Q4_1 in place: each chunk first goes through the fused
    // compare, which settles it when every value is bit-identical.
    const bool q4_1_in_place = job.gguf_type == kGgmlQ4_1 && source.quantized && !source.fp4 &&
                               !source.fp8 && !source.prequant && job.rope_head_rows == 0 &&
                               job.experts.empty() && !job.norm_plus_one &&
                               source.deinterleave == 0 && job.source_skip == 0 && !job.neg_exp &&
                               job.vhead_value_heads == 0 && job.mla_part == 0;
    for (uint64_t done = 0; done < count;) {
        const uint64_t begin = first + done;
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkValues, count - done));
        done += n;
        if (q4_1_in_place && begin % 32 == 0 && n % 32 == 0 &&
            quantized_equals_q4_1(source.quant, begin, n,
                                  clipped(job.gguf_data, begin / 32 * 20, (begin + n) / 32 * 20)))
            continue;
        if (same_width != 0 &&
            std::memcmp(source.float_data.data() + same_width * (begin + job.source_skip),
                        job.gguf_data.data() + same_width * begin, same_width * n) == 0)
            continue;
        const std::span<float> want = expected.first(n);
        const std::span<float> have = got.first(n);
        expected_values(job, begin, codes, want, result);
        dequantize_range(job.gguf_type, job.gguf_data, begin, have);
        // Bit-identical arrays (the expected case) need no per-value scan.
        if (std::memcmp(want.data(), have.data(), n * sizeof(float)) == 0) continue;
        compare_values(want, have, begin, result);
    }
}

std::vector<std::span<const uint8_t>> job_bytes(const ValueJob& job, uint64_t first,
                                                uint64_t count) {
    std::vector<std::span<const uint8_t>> parts;
    DecodableType layout{};
    if (count == 0 || !decodable_type(job.gguf_type, &layout)) return parts;
    const uint64_t last = first + count;
    parts.push_back(
        clipped(job.gguf_data, first / layout.block_size * layout.block_bytes,
                (last + layout.block_size - 1) / layout.block_size * layout.block_bytes));
    // A permuted tensor's unit reads source rows from anywhere in its heads: released whole.
    if ((job.rope_head_rows != 0 || job.vhead_value_heads != 0) && count < job.values) return parts;
    if (job.mla_part != 0) return parts;  // the other part reads the same source
    // Rows or single values gathered from across the source (de-interleaved or split rows,
    // transposed experts): the source released whole, at the end.
    if (job.source->deinterleave != 0 || job.source->transposed_rows != 0) {
        if (count == job.values)
            append_source_bytes(*job.source, 0, job.source->whole_source_values(), parts);
        return parts;
    }
    if (job.source->prequant) {  // values read across the whole source: released when done
        if (count == job.values)
            for (const auto part : {job.source->pq.weight, job.source->pq.zeros,
                                    job.source->pq.scales, job.source->pq.g_idx})
                if (!part.empty()) parts.push_back(part);
        return parts;
    }
    if (job.experts.empty()) {
        append_source_bytes(*job.source, first + job.source_skip, last + job.source_skip, parts);
        return parts;
    }
    for (uint64_t at = first; at < last;) {  // the part of each expert the range covers
        const uint64_t expert = at / job.expert_values;
        const uint64_t local = at % job.expert_values;
        const uint64_t end = std::min(last, (expert + 1) * job.expert_values);
        const uint64_t from = job.piece_first(expert) + local;
        append_source_bytes(*job.experts[expert], from, from + (end - at), parts);
        at = end;
    }
    return parts;
}

struct UnitScheduler::Unit {
    size_t job;  // kExtra: extra_[first]
    uint64_t first, count;
    uint64_t byte_begin, byte_end;  // the GGUF file range the unit reads
};

namespace {
constexpr size_t kExtra = std::numeric_limits<size_t>::max();
}  // namespace

UnitScheduler::UnitScheduler(std::vector<ValueJob>& jobs,
                             std::span<const MappedFile* const> mappings,
                             std::vector<ExtraUnit> extra)
    : jobs_(jobs), mappings_(mappings), extra_(std::move(extra)) {
    units_left_ = std::make_unique<std::atomic<size_t>[]>(jobs.size());
    for (size_t j = 0; j < jobs.size(); ++j) {
        const ValueJob& job = jobs[j];
        DecodableType layout{1, 4};
        decodable_type(job.gguf_type, &layout);
        for (uint64_t first = 0; first < job.values; first += kUnitValues) {
            const uint64_t count = std::min<uint64_t>(kUnitValues, job.values - first);
            const uint64_t begin = first / layout.block_size * layout.block_bytes;
            const uint64_t end =
                (first + count + layout.block_size - 1) / layout.block_size * layout.block_bytes;
            units_.push_back(
                {j, first, count, job.gguf_file_offset + begin,
                 job.gguf_file_offset + std::min<uint64_t>(end, job.gguf_data.size())});
            ++units_left_[j];
            if (by_shard_.size() <= job.gguf_shard) by_shard_.resize(job.gguf_shard + 1);
            by_shard_[job.gguf_shard].push_back(units_.size() - 1);
        }
    }
    for (size_t e = 0; e < extra_.size(); ++e) {
        const ExtraUnit& unit = extra_[e];
        units_.push_back({kExtra, e, 0, unit.begin, unit.end});
        if (by_shard_.size() <= unit.shard) by_shard_.resize(unit.shard + 1);
        by_shard_[unit.shard].push_back(units_.size() - 1);
    }
    for (auto& list : by_shard_)
        std::sort(list.begin(), list.end(),
                  [&](size_t a, size_t b) { return units_[a].byte_begin < units_[b].byte_begin; });
    written_ = std::make_unique<std::atomic<uint64_t>[]>(units_.size());
    queued_ = std::make_unique<std::atomic<bool>[]>(units_.size());
    for (size_t u = 0; u < units_.size(); ++u) {
        written_[u] = 0;
        queued_[u] = false;
        if (units_[u].byte_end <= units_[u].byte_begin) make_ready(u);  // nothing to wait for
    }
}

UnitScheduler::~UnitScheduler() = default;

size_t UnitScheduler::unit_count() const { return units_.size(); }

void UnitScheduler::make_ready(size_t unit) {
    if (queued_[unit].exchange(true)) return;
    std::lock_guard lock(mutex_);
    ready_.push_back(unit);
}

void UnitScheduler::region_written(size_t shard, uint64_t offset, uint64_t length) {
    if (shard >= by_shard_.size() || length == 0) return;
    const std::vector<size_t>& list = by_shard_[shard];
    const uint64_t end = offset + length;
    // The first unit that ends after offset (units of one shard never overlap).
    auto it = std::partition_point(list.begin(), list.end(),
                                   [&](size_t u) { return units_[u].byte_end <= offset; });
    for (; it != list.end() && units_[*it].byte_begin < end; ++it) {
        const Unit& unit = units_[*it];
        const uint64_t covered = std::min(end, unit.byte_end) - std::max(offset, unit.byte_begin);
        if (written_[*it].fetch_add(covered) + covered >= unit.byte_end - unit.byte_begin)
            make_ready(*it);
    }
}

void UnitScheduler::run_unit(size_t u) {
    thread_local std::vector<float> expected, got;
    thread_local std::vector<uint8_t> codes;
    if (expected.size() < kChunkValues) {
        expected.resize(kChunkValues);
        got.resize(kChunkValues);
        codes.resize(kChunkValues);
    }
    const Unit& unit = units_[u];
    if (unit.job == kExtra) return extra_[unit.first].run();
    ValueJob& job = jobs_[unit.job];
    CompareResult partial;
    compare_range(job, unit.first, unit.count, expected, got, codes, partial);
    const auto release = [&](uint64_t first, uint64_t count) {
        if (mappings_.empty()) return;
        for (const auto bytes : job_bytes(job, first, count)) release_mapped(mappings_, bytes);
    };
    release(unit.first, unit.count);
    if (units_left_[unit.job].fetch_sub(1) == 1) release(0, job.values);
    std::lock_guard lock(mutex_);
    job.result.merge(partial);
}

bool UnitScheduler::run_ready_unit() {
    size_t u;
    {
        std::lock_guard lock(mutex_);
        if (ready_.empty() || error_) return false;
        u = ready_.front();
        ready_.pop_front();
    }
    try {
        run_unit(u);
        units_done_.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        return false;
    }
    return true;
}

void UnitScheduler::cancel(std::exception_ptr reason) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::move(reason);
}

void UnitScheduler::run_all(unsigned threads) {
    for (size_t u = 0; u < units_.size(); ++u) make_ready(u);
    const auto worker = [&] {
        while (run_ready_unit()) {
        }
    };
    const unsigned count = std::max(
        1u, std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(1, units_.size()))));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < count; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& thread : pool) thread.join();
    if (error_) std::rethrow_exception(error_);
}

void run_value_jobs(std::vector<ValueJob>& jobs, unsigned threads,
                    std::span<const MappedFile* const> mappings) {
    UnitScheduler scheduler(jobs, mappings);
    scheduler.run_all(threads);
}

}  // namespace rebox::verify_ref
