// The value comparison of every matched (GGUF tensor, source tensor) pair, split into work units
// and run on a std::thread pool; each unit streams 64K-value chunks (no whole-tensor buffers) and
// drops the mapped pages it has read from the resident set. A UnitScheduler also lets a writer run
// the units while the file is still being written: a unit becomes ready once every byte of its
// GGUF range has been reported written.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "format/mapped_file.hpp"
#include "rebox/ggml_type.hpp"
#include "verify/sources/source_index.hpp"
#include "verify/values/ref_compare.hpp"

namespace rebox::verify_ref {

struct ValueJob {
    uint32_t gguf_type = 0;                // raw ggml id, decodable (checked by the caller)
    std::span<const uint8_t> gguf_data;    // exactly the tensor's bytes (checked by the caller)
    const SourceTensor* source = nullptr;  // usable (no problem), same element count
    uint64_t values = 0;
    size_t gguf_shard = 0;          // the shard holding gguf_data
    uint64_t gguf_file_offset = 0;  // gguf_data's offset inside that shard's file
    // llama q/k: GGUF rows hold the source rows permuted per head (ref_rope.hpp); 0 = in order.
    uint64_t rope_head_rows = 0;
    uint64_t row_values = 0;  // values per row when rope_head_rows != 0
    // Stacked experts from per-expert sources: GGUF value i is value i % expert_values of
    // experts[i / expert_values] (source == experts[0]). Empty: the one source holds every value.
    std::vector<const SourceTensor*> experts;
    uint64_t expert_values = 0;
    // Pieces that start inside their source (gemma4's gate_up from mlx-lm's switch_glu gate and
    // up: piece 2e + k is expert e of half k): GGUF value i is value i % expert_values +
    // expert_firsts[i / expert_values] of experts[i / expert_values]. Empty: every piece from 0.
    std::vector<uint64_t> expert_firsts;
    uint64_t piece_first(uint64_t piece) const {
        return expert_firsts.empty() ? 0 : expert_firsts[piece];
    }
    // gemma norms: the GGUF holds the source value + 1 as the converter computes it
    // (ref_norm_shift.hpp). The source is a float tensor (the caller checked).
    bool norm_plus_one = false;
    // qwen35 ssm_a: the GGUF holds -exp(source value) (ref_linear_attention.hpp); a float source.
    bool neg_exp = false;
    // Linear attention's value-head reorder (ref_linear_attention.hpp); vhead_value_heads 0: none.
    // Rows of row_values values from vhead_first on are value heads of vhead_unit rows, or with
    // vhead_columns each row's values are value heads of vhead_unit columns.
    uint64_t vhead_key_heads = 0;
    uint64_t vhead_value_heads = 0;
    uint64_t vhead_first = 0;
    uint64_t vhead_unit = 0;
    bool vhead_columns = false;
    // xlm-roberta position_embd: GGUF value i is source value i + source_skip (the source's first
    // rows are left out). 0 for every other tensor.
    uint64_t source_skip = 0;
    // deepseek2's kv_b_proj split (ref_transforms.hpp RefRows::mla_k_b / mla_v_b): the source is
    // mla_heads heads of mla_nope + mla_v rows of mla_rank values; mla_part 1 (attn_k_b): GGUF
    // value (h*rank + c)*nope + j is source value (h*(nope+v) + j)*rank + c; 2 (attn_v_b): GGUF
    // row h*v + r is source row h*(nope+v) + nope + r. 0: none.
    uint8_t mla_part = 0;
    uint64_t mla_heads = 0, mla_nope = 0, mla_v = 0, mla_rank = 0;
    // A lossy GGUF type from a float source: checked by re-quantizing (requant_check.hpp), not by
    // the value comparison of this file.
    bool requantize = false;
    CompareResult result;  // filled by run_value_jobs
};

// Values per streamed chunk: small enough that the expected and read-back arrays (32 KiB each) and
// the codes stay in the core's L2 cache between being written and being compared.
inline constexpr size_t kChunkValues = 8192;
inline constexpr uint64_t kUnitValues = uint64_t{1} << 22;  // values per work unit (thread task)

// Compares values [first, first+count) of one job; the range is a multiple of 32 values except at
// the tensor's end. Scratch buffers hold kChunkValues each.
void compare_range(const ValueJob& job, uint64_t first, uint64_t count, std::span<float> expected,
                   std::span<float> got, std::span<uint8_t> codes, CompareResult& result);

// The byte ranges values [first, first+count) of a job read: GGUF data, then the source's codes,
// scales and mins (quantized) or its float data; clipped to the arrays, unused parts empty.
std::vector<std::span<const uint8_t>> job_bytes(const ValueJob& job, uint64_t first,
                                                uint64_t count);

// The work units of a set of jobs, each ready to run once its GGUF bytes are written. Thread-safe:
// any number of threads may report regions and run units at the same time.
class UnitScheduler {
  public:
    // Work of another kind that reads GGUF bytes [begin, end) of shard `shard` (the re-quantization
    // of a lossy tensor's rows), scheduled like a value unit: ready once those bytes are written.
    struct ExtraUnit {
        size_t shard = 0;
        uint64_t begin = 0, end = 0;
        std::function<void()> run;
    };
    UnitScheduler(std::vector<ValueJob>& jobs, std::span<const MappedFile* const> mappings,
                  std::vector<ExtraUnit> extra = {});
    ~UnitScheduler();
    // Bytes [offset, offset+length) of shard `shard` hold their final contents (each byte is
    // reported at most once); units whose whole range is now written become ready.
    void region_written(size_t shard, uint64_t offset, uint64_t length);
    // Runs one ready unit if there is one; false when none is ready right now.
    bool run_ready_unit();
    // Makes every unit ready (the whole file is written) and runs what is left on `threads`
    // workers. Rethrows the first exception a unit raised.
    void run_all(unsigned threads);
    // Units finished so far, and all units; for progress reports. Thread-safe.
    size_t units_done() const { return units_done_.load(std::memory_order_relaxed); }
    size_t unit_count() const;
    // Stops handing out units; run_all() then rethrows `reason`. Thread-safe.
    void cancel(std::exception_ptr reason);

  private:
    struct Unit;
    void make_ready(size_t unit);
    void run_unit(size_t unit);
    std::vector<ValueJob>& jobs_;
    std::span<const MappedFile* const> mappings_;
    std::vector<ExtraUnit> extra_;
    std::vector<Unit> units_;
    std::vector<std::vector<size_t>> by_shard_;         // unit indices per shard, by byte offset
    std::unique_ptr<std::atomic<uint64_t>[]> written_;  // bytes of each unit written so far
    std::unique_ptr<std::atomic<bool>[]> queued_;
    std::unique_ptr<std::atomic<size_t>[]> units_left_;  // per job
    std::mutex mutex_;                                   // ready_, the job results, error_
    std::deque<size_t> ready_;
    std::exception_ptr error_;
    std::atomic<size_t> units_done_{0};
};

// Runs every job on `threads` workers (>= 1). Bytes a finished unit read are released from
// whichever of `mappings` holds them (whole pages; shared edge pages once the job is done).
void run_value_jobs(std::vector<ValueJob>& jobs, unsigned threads,
                    std::span<const MappedFile* const> mappings = {});

}  // namespace rebox::verify_ref
