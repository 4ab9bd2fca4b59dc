// Work units over all matched tensors, a std::thread pool pulling them by an atomic counter, and
// the per-chunk expected-vs-read-back comparison (F32 from F32 first tries a plain byte compare;
// every chunk first tries a bitwise compare of the two float arrays before the value-by-value
// scan). Finished units release the mapped pages they read.
#include "value_checks.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "ref_dequant.hpp"
#include "ref_norm_shift.hpp"
#include "ref_rope.hpp"

namespace rebox::verify_ref {
namespace {

constexpr uint32_t kGgmlF32 = 0;

std::span<const uint8_t> clipped(std::span<const uint8_t> bytes, uint64_t begin, uint64_t end) {
    end = std::min<uint64_t>(end, bytes.size());
    if (begin >= end) return {};
    return bytes.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
}

uint64_t source_float_width(SourceFloat dtype) { return dtype == SourceFloat::F32 ? 4 : 2; }

struct WorkUnit {
    size_t job;
    uint64_t first;
    uint64_t count;
};

// Expected values [begin, begin+out.size()) of the GGUF tensor: the source's values at the same
// index, or for a permuted tensor at the same place of the source row that GGUF row holds.
void fill_from(const SourceEntry& source, uint64_t source_first, std::span<uint8_t> codes,
               std::span<float> part, CompareResult& result) {
    if (source.prequant) {
        PrequantInexact inexact;
        expected_from_prequant(source.pq, source_first, part, inexact);
        if (inexact.index < result.source_inexact_index) {
            result.source_inexact_index = inexact.index;
            result.source_inexact_value = inexact.value;
        }
    } else if (source.quantized)
        expected_from_quantized(source.quant, source_first, codes, part);
    else
        expected_from_float(source.float_dtype, source.float_data, source_first, part);
}

void expected_values(const ValueJob& job, uint64_t begin, std::span<uint8_t> codes,
                     std::span<float> out, CompareResult& result) {
    const SourceEntry& source = *job.source;
    const auto fill = [&](uint64_t source_first, std::span<float> part) {
        fill_from(source, source_first, codes, part, result);
    };
    if (!job.experts.empty()) {  // expert e's values, in order, at [e*V, (e+1)*V)
        for (size_t k = 0; k < out.size();) {
            const uint64_t index = begin + k;
            const uint64_t expert = index / job.expert_values, at = index % job.expert_values;
            const size_t run =
                static_cast<size_t>(std::min<uint64_t>(job.expert_values - at, out.size() - k));
            fill_from(*job.experts[expert], at, codes, out.subspan(k, run), result);
            k += run;
        }
        return;
    }
    if (job.norm_plus_one) {
        fill(begin, out);
        return add_one_as_converter(source.float_dtype, out);
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
void append_source_bytes(const SourceEntry& source, uint64_t first, uint64_t last,
                         std::vector<std::span<const uint8_t>>& parts) {
    if (!source.quantized) {
        const uint64_t width = source_float_width(source.float_dtype);
        parts.push_back(clipped(source.float_data, first * width, last * width));
        return;
    }
    const QuantizedSource& q = source.quant;
    const uint64_t group = std::max<uint64_t>(q.group, 1);
    const uint64_t group_begin = first / group, group_end = (last + group - 1) / group;
    parts.push_back(clipped(q.qcodes, first * q.bits / 8, (last * q.bits + 7) / 8));
    parts.push_back(clipped(q.scales, 2 * group_begin, 2 * group_end));
    parts.push_back(clipped(q.mins, 2 * group_begin, 2 * group_end));
}

}  // namespace

void compare_range(const ValueJob& job, uint64_t first, uint64_t count, std::span<float> expected,
                   std::span<float> got, std::span<uint8_t> codes, CompareResult& result) {
    const SourceEntry& source = *job.source;
    const bool f32_copy = job.gguf_type == kGgmlF32 && !source.quantized &&
                          source.float_dtype == SourceFloat::F32 && job.rope_head_rows == 0 &&
                          job.experts.empty() && !job.norm_plus_one;
    for (uint64_t done = 0; done < count;) {
        const uint64_t begin = first + done;
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkValues, count - done));
        done += n;
        if (f32_copy && std::memcmp(source.float_data.data() + 4 * begin,
                                    job.gguf_data.data() + 4 * begin, 4 * n) == 0)
            continue;  // byte-identical copy
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
    if (job.rope_head_rows != 0 && count < job.values) return parts;
    if (job.source->prequant) {  // values read across the whole source: released when done
        if (count == job.values)
            for (const auto part : {job.source->pq.weight, job.source->pq.zeros,
                                    job.source->pq.scales, job.source->pq.g_idx})
                if (!part.empty()) parts.push_back(part);
        return parts;
    }
    if (job.experts.empty()) {
        append_source_bytes(*job.source, first, last, parts);
        return parts;
    }
    for (uint64_t at = first; at < last;) {  // the part of each expert the range covers
        const uint64_t expert = at / job.expert_values;
        const uint64_t local = at % job.expert_values;
        const uint64_t end = std::min(last, (expert + 1) * job.expert_values);
        append_source_bytes(*job.experts[expert], local, local + (end - at), parts);
        at = end;
    }
    return parts;
}

void run_value_jobs(std::vector<ValueJob>& jobs, unsigned threads,
                    std::span<const MappedFile* const> mappings) {
    std::vector<WorkUnit> units;
    std::vector<std::atomic<size_t>> units_left(jobs.size());
    for (size_t j = 0; j < jobs.size(); ++j) {
        for (uint64_t first = 0; first < jobs[j].values; first += kUnitValues) {
            units.push_back({j, first, std::min<uint64_t>(kUnitValues, jobs[j].values - first)});
            ++units_left[j];
        }
    }
    const auto release = [&](const ValueJob& job, uint64_t first, uint64_t count) {
        if (mappings.empty()) return;
        for (const auto bytes : job_bytes(job, first, count)) release_mapped(mappings, bytes);
    };

    std::atomic<size_t> next{0};
    std::mutex merge_mutex;
    std::exception_ptr error;
    const auto worker = [&] {
        try {
            std::vector<float> expected(kChunkValues), got(kChunkValues);
            std::vector<uint8_t> codes(kChunkValues);
            for (size_t u = next++; u < units.size(); u = next++) {
                const WorkUnit& unit = units[u];
                CompareResult partial;
                compare_range(jobs[unit.job], unit.first, unit.count, expected, got, codes,
                              partial);
                release(jobs[unit.job], unit.first, unit.count);
                if (units_left[unit.job].fetch_sub(1) == 1)
                    release(jobs[unit.job], 0, jobs[unit.job].values);
                std::lock_guard lock(merge_mutex);
                jobs[unit.job].result.merge(partial);
            }
        } catch (...) {
            std::lock_guard lock(merge_mutex);
            if (!error) error = std::current_exception();
            next = units.size();
        }
    };
    const unsigned count = std::max(
        1u, std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(1, units.size()))));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < count; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& thread : pool) thread.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace rebox::verify_ref
