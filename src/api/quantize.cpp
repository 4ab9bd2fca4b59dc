// quantize_gguf(): the job (quantize_file/quantize_job), then every tensor written in llama's
// order into temporary outputs that are renamed into place only when all of them are complete.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "format/atomic_output.hpp"
#include "format/mapped_file.hpp"
#include "quantize_file/quantize_job.hpp"
#include "quantize_file/tensor_writer.hpp"
#include "rebox/rebox.hpp"

namespace rebox {

QuantizeReport quantize_gguf(const std::filesystem::path& input,
                             const std::filesystem::path& output, const QuantizeOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    QuantizeJob job = make_quantize_job(input, output, options);
    QuantizeReport report;
    report.type = std::string(job.ftype.name);
    report.file_type = static_cast<uint32_t>(job.ftype.ftype);
    report.notes = job.notes;
    report.outputs = job.outputs;
    for (size_t s = 0; s < job.input.shard_count(); ++s)
        report.input_bytes += job.input.shard(s).file_size();
    for (const GgufLayout& shard : job.layout.shards) report.output_bytes += shard.file_size();
    for (const GgufSet::Tensor& t : job.input.tensors())
        report.input_elements += t.info->element_count();
    report.needs_imatrix = job.needs_imatrix;
    for (size_t i = 0; i < job.tensors.size(); ++i) {
        const QuantizeJobTensor& t = job.tensors[i];
        const auto& place = job.layout.places[i];
        report.tensors.push_back(
            {t.name, t.source->info->ne, t.source->info->type, t.target, t.choice.reason,
             job.layout.shards[place.shard].tensors()[place.index].nbytes, t.source->info->nbytes});
    }
    if (options.dry_run) return report;

    const unsigned threads =
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::unique_ptr<AtomicOutput>> outs;
    for (size_t s = 0; s < job.outputs.size(); ++s) {
        outs.push_back(std::make_unique<AtomicOutput>(job.outputs[s], options.force));
        outs[s]->resize(job.layout.shards[s].file_size());
        outs[s]->pwrite(job.layout.shards[s].serialize_metadata(), 0);
    }
    // data_offset() walks every KV (the vocabulary): once per shard, not per tensor.
    std::vector<uint64_t> data_offsets;
    for (const GgufLayout& shard : job.layout.shards) data_offsets.push_back(shard.data_offset());
    std::vector<TensorWrite> writes;
    std::vector<uint64_t> tensor_bytes;
    writes.reserve(job.tensors.size());
    for (size_t i = 0; i < job.tensors.size(); ++i) {
        const QuantizeJobTensor& t = job.tensors[i];
        const auto& place = job.layout.places[i];
        const GgufLayout& shard = job.layout.shards[place.shard];
        const GgufTensorInfo& info = shard.tensors()[place.index];
        TensorWrite& write = writes.emplace_back();
        write.source = gguf_tensor_rows(job.input.shard(t.source->shard), *t.source->info);
        write.target = t.target;
        write.imatrix = t.imatrix ? t.imatrix->data() : nullptr;
        write.out = outs[place.shard].get();
        write.out_offset = data_offsets[place.shard] + info.offset;
        tensor_bytes.push_back(info.nbytes);
    }
    // One pool over every tensor's chunks. The input stays mapped; a finished tensor's pages are
    // dropped so that memory holds about the tensors in flight, whatever the model size.
    std::atomic<uint64_t> done{0};
    uint64_t reported = 0;
    const auto tensor_done = [&](size_t i) {
        const QuantizeJobTensor& t = job.tensors[i];
        const GgufFile& input_shard = job.input.shard(t.source->shard);
        if (const MappedFile* mapping = input_shard.mapping())
            mapping->release(input_shard.data_offset() + t.source->info->offset,
                             t.source->info->nbytes);
        done += tensor_bytes[i];
    };
    const auto poll = [&] {
        const uint64_t now = done.load();
        if (!options.progress || now == reported) return;
        reported = now;
        if (!options.progress({"quantize", now, report.output_bytes}))
            throw Error(ExitClass::cancelled, "quantize: cancelled; nothing was written");
    };
    write_quantized_tensors(writes, threads, tensor_done, poll);
    for (auto& out : outs) out->commit();
    report.written = true;
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace rebox
