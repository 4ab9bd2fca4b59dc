// convert_quantized: the quantize choices for the plan, then tensor by tensor in llama's order the
// rows encoded from the checkpoint (chunk_encoder, the exact file's bytes) and quantized by the
// quantize writer on one pool of all cores over every tensor's chunks, verification running behind
// the writing, and the outputs renamed into place only when every check passed.
#include "convert_quantized.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "chunk_encoder.hpp"
#include "convert.hpp"
#include "convert_outputs.hpp"
#include "format/atomic_output.hpp"
#include "format/atomic_output_set.hpp"
#include "format/background_writeback.hpp"
#include "format/gguf_layout.hpp"
#include "format/gguf_shards.hpp"
#include "format/mapped_file.hpp"
#include "input_guard.hpp"
#include "plan/fp8_as_q8.hpp"
#include "progress_call.hpp"
#include "quantize_file/tensor_writer.hpp"
#include "rebox/error.hpp"
#include "source_release.hpp"
#include "verify/verify.hpp"

namespace rebox::convert_detail {
namespace {

// The rows of a planned tensor in its exact type: each chunk of rows encoded from the source as
// the exact conversion writes it (row permutation, stacked experts, computed values included).
TensorRows planned_rows(const SourceModel& source, const TensorPlan& tp,
                        const std::vector<const MappedFile*>& mappings) {
    TensorRows rows;
    rows.file = source.dir.string();
    rows.info = {tp.gguf_name, tp.ne, tp.type, 0, tp.nbytes};
    const uint64_t n = static_cast<uint64_t>(tp.ne[0]);
    const uint64_t row_bytes = tp.nbytes / (rows.info.element_count() / n);
    static const SourceTensor kNoSource;
    // Chunk `c` in the tensor's values, with the source tensor it reads and where in it.
    auto chunk_of = [&tp, n, row_bytes](int64_t first, int64_t count) {
        Chunk c;
        c.first = static_cast<uint64_t>(first) * n;
        c.count = static_cast<uint64_t>(count) * n;
        c.out_bytes = static_cast<uint64_t>(count) * row_bytes;
        c.source_index = tp.source_index;
        c.source_first = c.first;
        if (!tp.expert_sources.empty()) {  // the quantize writer's chunks stay in one expert
            const uint64_t expert = c.first / tp.expert_values;
            c.source_index = tp.expert_sources.at(expert);
            c.source_first = c.first - expert * tp.expert_values + tp.expert_first(expert);
        }
        return c;
    };
    // The writer's chunks stay in one expert; an expert of a fused tensor (gemma4's gate_up from
    // MLX) is two pieces from two sources: each chunk is read piece by piece.
    const auto for_each_piece = [&tp, n](int64_t first, int64_t count, const auto& visit) {
        if (tp.expert_sources.empty()) return visit(first, count);
        const int64_t piece_rows = static_cast<int64_t>(tp.expert_values / n);
        for (int64_t row = first; row < first + count;) {
            const int64_t end = std::min(first + count, (row / piece_rows + 1) * piece_rows);
            visit(row, end - row);
            row = end;
        }
    };
    // A float tensor the exact file holds as the checkpoint stores it: its rows are the mapped
    // source bytes themselves, read in place (no copy into the scratch).
    const bool in_place = !tp.is_computed() && tp.row_source.empty() && tp.transpose.heads == 0 &&
                          tp.expert_sources.empty() &&
                          (tp.encoding == Encoding::copy_f32 || tp.encoding == Encoding::copy_f16 ||
                           tp.encoding == Encoding::copy_bf16);
    if (in_place) {
        const std::span<const uint8_t> data = source.tensors[tp.source_index].float_data;
        if (data.size() == tp.nbytes) {
            rows.read = [data, row_bytes](int64_t first, int64_t count, std::vector<uint8_t>&) {
                return data.subspan(static_cast<uint64_t>(first) * row_bytes,
                                    static_cast<uint64_t>(count) * row_bytes);
            };
        }
    }
    if (!rows.read)
        rows.read = [&source, &tp, chunk_of, for_each_piece, row_bytes](
                        int64_t first, int64_t count, std::vector<uint8_t>& scratch) {
            scratch.resize(static_cast<uint64_t>(count) * row_bytes);
            for_each_piece(first, count, [&](int64_t piece_first, int64_t piece_count) {
                const Chunk c = chunk_of(piece_first, piece_count);
                const SourceTensor& tensor =
                    tp.is_computed() ? kNoSource : source.tensors[c.source_index];
                Chunk local = c;
                local.first = c.source_first;
                encode_chunk(
                    tensor, tp, tp.row_source.empty() ? local : c,
                    std::span<uint8_t>(scratch).subspan(
                        static_cast<uint64_t>(piece_first - first) * row_bytes, c.out_bytes));
            });
            return std::span<const uint8_t>(scratch);
        };
    // A permuted tensor's chunks read rows spread over its heads: released with the tensor.
    if (!tp.is_computed() && tp.row_source.empty() && tp.transpose.heads == 0)
        rows.release = [&source, chunk_of, for_each_piece, &mappings](int64_t first,
                                                                      int64_t count) {
            for_each_piece(first, count, [&](int64_t piece_first, int64_t piece_count) {
                const Chunk c = chunk_of(piece_first, piece_count);
                release_source_values(mappings, source.tensors[c.source_index], c.source_first,
                                      c.count);
            });
        };
    return rows;
}

}  // namespace

QuantizeChoices choose_for_plan(const Plan& plan, const SourceModel& source,
                                const QuantizeOptions& options, bool fp8_as_q8) {
    std::vector<QuantizeInputTensor> tensors;
    for (const TensorPlan& tp : plan.tensors) {
        QuantizeInputTensor& t = tensors.emplace_back();
        t.name = tp.gguf_name;
        t.ne = tp.ne;
        t.type = tp.type;
        if (fp8_as_q8 && plan_detail::fp8_forced_q8_0(source, tp)) t.forced = GgmlType::Q8_0;
    }
    QuantizeOptions effective = options;
    effective.allow_requantize = false;  // exact blocks stay exact
    // Not options of convert --quantize: the file must stay the exact conversion's, which verify
    // derives (its KVs and layers). The CLI does not offer them.
    effective.override_kvs.clear();
    effective.prune_layers.reset();
    effective.keep_split = false;  // a checkpoint has no input shards to keep
    QuantizeChoices choices = choose_quantized_output(plan.kvs, tensors, kGgufDefaultAlignment,
                                                      effective, source.dir.string());
    return choices;
}

QuantizeReport quantize_report(const Plan& plan, const QuantizeChoices& choices) {
    QuantizeReport report;
    report.type = std::string(choices.ftype.name);
    report.file_type = static_cast<uint32_t>(choices.ftype.ftype);
    report.notes = choices.notes;
    report.needs_imatrix = choices.needs_imatrix;
    report.input_bytes = plan.source_bytes;
    for (const GgufLayout& shard : choices.layout.shards) report.output_bytes += shard.file_size();
    for (size_t i = 0; i < choices.tensors.size(); ++i) {
        const QuantizeTensorChoice& c = choices.tensors[i];
        const TensorPlan& tp = plan.tensors[c.input_index];
        const auto& place = choices.layout.places[i];
        std::string reason = c.choice.reason;
        if (c.kept_quantized)  // convert's own words: these blocks are the exact conversion
            reason = "kept as " + ggml_type_name(tp.type) + " (carried exactly from the source)";
        report.tensors.push_back({tp.gguf_name, tp.ne, tp.type, c.target, reason,
                                  choices.layout.shards[place.shard].tensors()[place.index].nbytes,
                                  tp.nbytes});
    }
    for (const TensorPlan& tp : plan.tensors) {
        uint64_t elements = 1;
        for (int64_t d : tp.ne) elements *= static_cast<uint64_t>(d);
        report.input_elements += elements;
    }
    return report;
}

ConvertReport convert_quantized(const ConvertOptions& options, const SourceModel& source,
                                const Plan& plan, std::chrono::steady_clock::time_point start,
                                const Plan* mmproj, const std::filesystem::path& mmproj_path) {
    QuantizeOptions qopts = *options.quantize;
    qopts.split = options.split;
    qopts.dry_run = false;
    const QuantizeChoices choices = choose_for_plan(plan, source, qopts, options.fp8_as_q8);
    const bool split = options.split.max_bytes > 0 || options.split.max_tensors > 0 ||
                       options.split.no_tensor_first_split;
    ConvertReport result;
    result.quantize = quantize_report(plan, choices);
    result.outputs = output_paths(options.output, choices.layout.shards.size(), split);
    std::vector<std::filesystem::path> targets = result.outputs;
    MmprojOutput projector = plan_mmproj_output(mmproj, mmproj_path, result, targets);
    refuse_output_over_input(*source.model_dir, targets);
    result.output_bytes = result.quantize->output_bytes;

    const unsigned threads =
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    ConvertOutputs outputs = open_outputs(options, source, choices.layout, result.outputs, threads);
    open_mmproj_output(options, result, projector);
    VerifySession* verify = outputs.verify.get();
    std::vector<const MappedFile*> mappings;
    for (const auto& file : source.files) mappings.push_back(file->mapping());
    SharedPages shared_pages(source, plan);
    // data_offset() walks every KV (the vocabulary): once per shard, not per tensor.
    std::vector<uint64_t> data_offsets;
    for (const GgufLayout& shard : choices.layout.shards)
        data_offsets.push_back(shard.data_offset());
    // The disk starts on each written chunk from a thread of its own, so commit()'s one fsync
    // waits only for the tail (declared after the outputs: it stops before they go).
    BackgroundWriteback writeback;
    std::vector<TensorWrite> writes;
    std::vector<uint64_t> tensor_bytes;
    writes.reserve(choices.tensors.size());
    for (size_t i = 0; i < choices.tensors.size(); ++i) {
        const QuantizeTensorChoice& c = choices.tensors[i];
        const TensorPlan& tp = plan.tensors[c.input_index];
        const auto& place = choices.layout.places[i];
        const GgufLayout& shard = choices.layout.shards[place.shard];
        TensorWrite& write = writes.emplace_back();
        write.source = planned_rows(source, tp, mappings);
        write.target = c.target;
        write.imatrix = c.imatrix ? c.imatrix->data() : nullptr;
        write.out = outputs.files[place.shard].get();
        write.out_offset = data_offsets[place.shard] + shard.tensors()[place.index].offset;
        write.written = [verify, &writeback, out = write.out, s = place.shard](uint64_t offset,
                                                                               uint64_t bytes) {
            if (verify) verify->region_written(s, offset, bytes);
            writeback.push(*out, offset, bytes);
        };
        if (verify) write.side_work = [verify] { return verify->run_ready_unit(); };
        tensor_bytes.push_back(shard.tensors()[place.index].nbytes);
    }
    // One pool over every tensor's chunks; a finished tensor's shared source pages are released
    // by the worker that wrote its last chunk, and progress is reported from this thread.
    std::atomic<uint64_t> done{0};
    uint64_t reported = 0;
    const auto tensor_done = [&](size_t i) {
        shared_pages.release_tensor(mappings, source, plan.tensors[choices.tensors[i].input_index]);
        done += tensor_bytes[i];
    };
    const auto poll = [&] {
        const uint64_t now = done.load();
        if (!options.progress || now == reported) return;
        reported = now;
        if (!call_progress(options.progress, Progress{"convert", now, result.output_bytes}))
            throw Error(ExitClass::cancelled, "", "", "cancelled by the progress callback");
    };
    write_quantized_tensors(writes, threads, tensor_done, poll);
    writeback.finish();
    write_mmproj_output(options, source, result, threads, projector, outputs);
    finish_outputs(outputs, result);
    if (result.written) {
        result.quantize->written = true;
        result.quantize->outputs = result.outputs;
    }
    result.seconds_total = seconds_since(start);
    result.quantize->seconds = result.seconds_total;
    return result;
}

}  // namespace rebox::convert_detail
