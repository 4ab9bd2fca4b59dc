// The conversion pipeline after the plan (api/entry_points.cpp reads the source and plans every
// tensor, stopping on any BLOCKER before this runs): write the GGUF into a temporary file with all
// cores (each worker encodes a slice and pwrites it at its precomputed offset; unchanged float
// bytes are copied file to file), verify the temporary file while it is being written (each region
// read back from the file once written), and only when every check passed fsync it and rename it
// into place.
#include "convert/convert.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "chunk_encoder.hpp"
#include "chunk_map.hpp"
#include "convert_outputs.hpp"
#include "convert_quantized.hpp"
#include "format/atomic_output.hpp"
#include "format/atomic_output_set.hpp"
#include "format/background_writeback.hpp"
#include "format/gguf_layout.hpp"
#include "format/gguf_shards.hpp"
#include "format/mapped_file.hpp"
#include "format/safetensors.hpp"
#include "input_guard.hpp"
#include "progress_call.hpp"
#include "rebox/error.hpp"
#include "rebox/rebox.hpp"
#include "source_fds.hpp"
#include "source_release.hpp"
#include "verify/mmproj/mmproj_verify.hpp"
#include "verify/verify.hpp"

namespace rebox {
namespace {

using convert_detail::Chunk;
using convert_detail::SourceFds;

using convert_detail::seconds_since;

// A plain byte copy of a float source (no permutation, no computed values): those chunks go file
// to file in the kernel instead of through a buffer.
bool is_byte_copy(const TensorPlan& tp) {
    return !tp.is_computed() && tp.row_source.empty() && tp.transpose.heads == 0 &&
           (tp.encoding == Encoding::copy_f32 || tp.encoding == Encoding::copy_f16 ||
            tp.encoding == Encoding::copy_bf16);
}

void write_tensors(const SourceModel& source, const Plan& plan, const ShardedLayout& layout,
                   std::vector<std::unique_ptr<AtomicOutput>>& outs, unsigned threads,
                   const ProgressCallback& progress, uint64_t total_bytes, VerifySession* verify) {
    const std::vector<Chunk> chunks = convert_detail::split_into_chunks(plan);
    std::atomic<uint64_t> bytes_done{0};
    // Input pages leave the resident set once consumed: each chunk's own whole pages right away,
    // the pages it shares with neighbouring chunks when the tensor's last chunk is done, a page
    // shared with other tensors when the last of them is.
    std::vector<const MappedFile*> mappings;
    for (const auto& file : source.files) mappings.push_back(file->mapping());
    std::vector<uint32_t> chunks_per_tensor(plan.tensors.size(), 0);
    for (const Chunk& chunk : chunks) ++chunks_per_tensor[chunk.plan_index];
    convert_detail::PendingParts pending(chunks_per_tensor);
    convert_detail::SharedPages shared_pages(source, plan);
    // File offset of each planned tensor's data (data_offset() walks every KV: not per chunk).
    std::vector<uint64_t> tensor_offsets(plan.tensors.size());
    std::vector<uint64_t> shard_data_offsets;
    for (const GgufLayout& shard : layout.shards) shard_data_offsets.push_back(shard.data_offset());
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const auto place = layout.places[i];
        tensor_offsets[i] = shard_data_offsets[place.shard] +
                            layout.shards[place.shard].tensors()[place.index].offset;
    }
    // Read-only descriptors of the source files, for the byte copies (opened on first use).
    SourceFds source_fds(mappings);
    BackgroundWriteback writeback;
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;

    auto worker = [&] {
        std::vector<uint8_t> buffer;
        try {
            for (;;) {
                if (failed.load()) break;
                // Checking what is written first keeps the verification close behind the writing
                // (its pages still in the page cache, little left to check at the end).
                if (verify != nullptr && verify->run_ready_unit()) continue;
                const size_t c = next.fetch_add(1);
                if (c >= chunks.size()) break;
                const Chunk& chunk = chunks[c];
                const TensorPlan& tp = plan.tensors[chunk.plan_index];
                static const SourceTensor kNoSource;
                const SourceTensor& tensor =
                    tp.is_computed() ? kNoSource : source.tensors[chunk.source_index];
                // Values are addressed in the chunk's own source (one expert of a stack).
                Chunk local = chunk;
                local.first = chunk.source_first;
                const size_t shard = layout.places[chunk.plan_index].shard;
                const uint64_t offset = tensor_offsets[chunk.plan_index] + chunk.out_offset;
                const auto copy = is_byte_copy(tp) ? source_fds.locate(tensor.float_data)
                                                   : std::optional<SourceFds::Place>();
                if (copy) {
                    const uint64_t width = float_dtype_size(tensor.float_dtype);
                    outs[shard]->copy_from(copy->fd, copy->offset + local.first * width,
                                           chunk.out_bytes, offset);
                } else {
                    buffer.resize(chunk.out_bytes);
                    convert_detail::encode_chunk(tensor, tp, tp.row_source.empty() ? local : chunk,
                                                 buffer);
                    outs[shard]->pwrite(buffer, offset);
                }
                if (verify != nullptr) verify->region_written(shard, offset, chunk.out_bytes);
                // The disk starts on this slice now (from the writeback thread, so this worker
                // never waits for the disk queue); commit()'s one fsync waits only for the tail.
                writeback.push(*outs[shard], offset, chunk.out_bytes);
                // A permuted chunk reads rows spread over its heads: released with the tensor.
                if (tp.row_source.empty() && tp.transpose.heads == 0)
                    convert_detail::release_source_values(mappings, tensor, local.first,
                                                          chunk.count);
                if (pending.finish(chunk.plan_index))
                    shared_pages.release_tensor(mappings, source, tp);
                bytes_done.fetch_add(chunk.out_bytes, std::memory_order_relaxed);
            }
        } catch (...) {
            std::lock_guard lock(error_mutex);
            if (!error) error = std::current_exception();
            failed = true;
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    // The caller's progress callback runs on this one thread; returning false cancels: the workers
    // stop after their current chunk and the outputs (never committed) remove their temporary
    // files.
    std::thread ticker;
    if (progress) {
        ticker = std::thread([&] {
            try {
                while (next.load() < chunks.size() && !failed.load()) {
                    if (!call_progress(progress,
                                       Progress{"convert", bytes_done.load(), total_bytes}))
                        throw Error(ExitClass::cancelled, "", "",
                                    "cancelled by the progress callback");
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                }
            } catch (...) {  // a callback that said no or threw: the call fails with an Error
                std::lock_guard lock(error_mutex);
                if (!error) error = std::current_exception();
                failed = true;
            }
        });
    }
    worker();
    for (auto& t : pool) t.join();
    if (ticker.joinable()) ticker.join();
    source_fds.close_all();
    writeback.finish();
    if (error) std::rethrow_exception(error);
    if (progress && !call_progress(progress, Progress{"convert", total_bytes, total_bytes}))
        throw Error(ExitClass::cancelled, "", "", "cancelled by the progress callback");
}

}  // namespace

namespace convert_detail {

MmprojOutput plan_mmproj_output(const Plan* mmproj, const std::filesystem::path& mmproj_path,
                                ConvertReport& result,
                                std::vector<std::filesystem::path>& targets) {
    MmprojOutput out;
    if (mmproj == nullptr) return out;
    out.plan = mmproj;
    std::vector<GgufTensorInfo> infos;
    for (const TensorPlan& tp : mmproj->tensors)
        infos.push_back({tp.gguf_name, tp.ne, tp.type, 0, tp.nbytes});
    out.layout = make_sharded_layout(mmproj->kvs, infos, SplitLimits{});
    result.mmproj = mmproj_path;
    result.mmproj_bytes = out.layout.shards[0].file_size();
    for (const auto& path : result.outputs)
        if (std::filesystem::weakly_canonical(path) ==
            std::filesystem::weakly_canonical(mmproj_path))
            throw_input_error(mmproj_path.string(), "--mmproj",
                              "is the text model's output too; choose another path");
    targets.push_back(mmproj_path);
    return out;
}

void open_mmproj_output(const ConvertOptions& options, const ConvertReport& result,
                        MmprojOutput& mmproj) {
    if (mmproj.plan == nullptr) return;
    mmproj.file = std::make_unique<AtomicOutput>(result.mmproj, options.force);
    mmproj.file->resize(result.mmproj_bytes);
    mmproj.file->pwrite(mmproj.layout.shards[0].serialize_metadata(), 0);
}

void write_mmproj_output(const ConvertOptions& options, const SourceModel& source,
                         const ConvertReport& result, unsigned threads, MmprojOutput& mmproj,
                         ConvertOutputs& outputs) {
    if (mmproj.plan == nullptr) return;
    std::vector<std::unique_ptr<AtomicOutput>> files;
    files.push_back(std::move(mmproj.file));
    write_tensors(source, *mmproj.plan, mmproj.layout, files, threads, {}, result.mmproj_bytes,
                  nullptr);
    // verify's own read-back of the mmproj (its values against the source, its KVs), folded into
    // the text model's verdict: committed with the text model's files (renamed before them), or
    // discarded with them.
    if (options.verify) outputs.also_verified = verify_mmproj(source.dir, files[0]->temp_path());
    outputs.files.push_back(std::move(files[0]));
}

ConvertReport write_conversion(const ConvertOptions& options, const SourceModel& source,
                               const Plan& plan, std::chrono::steady_clock::time_point start,
                               const Plan* mmproj, const std::filesystem::path& mmproj_path) {
    if (options.quantize)
        return convert_quantized(options, source, plan, start, mmproj, mmproj_path);
    ConvertReport result;
    std::vector<GgufTensorInfo> infos;
    for (const TensorPlan& tp : plan.tensors)
        infos.push_back({tp.gguf_name, tp.ne, tp.type, 0, tp.nbytes});
    const ShardedLayout layout = make_sharded_layout(plan.kvs, infos, options.split);
    const bool split = options.split.max_bytes > 0 || options.split.max_tensors > 0 ||
                       options.split.no_tensor_first_split;
    result.outputs = output_paths(options.output, layout.shards.size(), split);
    std::vector<std::filesystem::path> targets = result.outputs;
    MmprojOutput projector = plan_mmproj_output(mmproj, mmproj_path, result, targets);
    refuse_output_over_input(*source.model_dir, targets);
    for (const GgufLayout& shard : layout.shards) result.output_bytes += shard.file_size();

    const unsigned threads =
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    ConvertOutputs outputs = open_outputs(options, source, layout, result.outputs, threads);
    open_mmproj_output(options, result, projector);
    write_tensors(source, plan, layout, outputs.files, threads, options.progress,
                  result.output_bytes, outputs.verify.get());
    write_mmproj_output(options, source, result, threads, projector, outputs);
    finish_outputs(outputs, result);
    result.seconds_total = seconds_since(start);
    return result;
}

}  // namespace convert_detail
}  // namespace rebox
