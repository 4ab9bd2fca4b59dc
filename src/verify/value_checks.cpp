// Work units over all matched tensors, a std::thread pool pulling them by an atomic counter, and
// the per-chunk expected-vs-read-back comparison (F32 from F32 first tries a plain byte compare).
#include "value_checks.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "ref_dequant.hpp"

namespace rebox::verify_ref {
namespace {

constexpr uint32_t kGgmlF32 = 0;

struct WorkUnit {
    size_t job;
    uint64_t first;
    uint64_t count;
};

}  // namespace

void compare_range(const ValueJob& job, uint64_t first, uint64_t count, std::span<float> expected,
                   std::span<float> got, std::span<uint8_t> codes, CompareResult& result) {
    const SourceEntry& source = *job.source;
    const bool f32_copy =
        job.gguf_type == kGgmlF32 && !source.quantized && source.float_dtype == SourceFloat::F32;
    for (uint64_t done = 0; done < count;) {
        const uint64_t begin = first + done;
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkValues, count - done));
        done += n;
        if (f32_copy && std::memcmp(source.float_data.data() + 4 * begin,
                                    job.gguf_data.data() + 4 * begin, 4 * n) == 0)
            continue;  // byte-identical copy
        const std::span<float> want = expected.first(n);
        const std::span<float> have = got.first(n);
        if (source.quantized)
            expected_from_quantized(source.quant, begin, codes, want);
        else
            expected_from_float(source.float_dtype, source.float_data, begin, want);
        dequantize_range(job.gguf_type, job.gguf_data, begin, have);
        compare_values(want, have, begin, result);
    }
}

void run_value_jobs(std::vector<ValueJob>& jobs, unsigned threads) {
    std::vector<WorkUnit> units;
    for (size_t j = 0; j < jobs.size(); ++j)
        for (uint64_t first = 0; first < jobs[j].values; first += kUnitValues)
            units.push_back({j, first, std::min<uint64_t>(kUnitValues, jobs[j].values - first)});

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
