// write_quantized_tensors: the row chunks of every tensor handed out to one pool of worker threads;
// each chunk stays inside one expert (its imatrix slice) and has its own output offset, so any
// thread count and any order give the same bytes.
#include "quantize_file/tensor_writer.hpp"

#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "format/half.hpp"
#include "format/mapped_file.hpp"
#include "rebox/error.hpp"
#include "rebox/rebox.hpp"

namespace rebox {
namespace {

constexpr int64_t kChunkValues = 1 << 18;  // about 1 MiB of F32 per thread

struct Chunk {
    size_t tensor = 0;  // index into the jobs
    int64_t first_row = 0;
    int64_t rows = 0;
};

uint64_t row_bytes(GgmlType type, int64_t n) { return *ggml_nbytes(type, {n}); }

[[noreturn]] void refuse_value(const std::string& file, const GgufTensorInfo& t, int64_t index,
                               float value, const std::string& what, const std::string& fix) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
    throw_input_error(file, t.name + " value " + std::to_string(index),
                      text + std::string(" ") + what, fix);
}

// Source rows [first, first + rows), whose bytes start at `src`, as F32 into `out`.
void source_to_f32(const std::string& file, const GgufTensorInfo& t, const uint8_t* src,
                   int64_t first, int64_t rows, float* out) {
    const int64_t n = t.ne[0];
    const uint64_t src_row = row_bytes(t.type, n);
    const int64_t count = rows * n;
    switch (t.type) {
        case GgmlType::F32:
            std::memcpy(out, src, static_cast<size_t>(count) * 4);
            break;
        case GgmlType::F16:
            for (int64_t i = 0; i < count; ++i) {
                uint16_t h;
                std::memcpy(&h, src + 2 * i, 2);
                out[i] = half_to_float(h);
            }
            break;
        case GgmlType::BF16: {
            // bf16 is the top half of a binary32: widening is a shift (the loop vectorizes);
            // an all-ones exponent (NaN or Inf) is remembered and located afterwards.
            uint32_t non_finite = 0;
            for (int64_t i = 0; i < count; ++i) {
                uint16_t b;
                std::memcpy(&b, src + 2 * i, 2);
                non_finite |= static_cast<uint32_t>((b & 0x7F80u) == 0x7F80u);
                const uint32_t bits = static_cast<uint32_t>(b) << 16;
                std::memcpy(out + i, &bits, 4);
            }
            if (non_finite == 0) return;
            break;
        }
        default:
            for (int64_t r = 0; r < rows; ++r)
                dequantize_row(t.type, src + r * src_row, out + r * n, n);
    }
    if (t.type == GgmlType::F32 || t.type == GgmlType::F16 || t.type == GgmlType::BF16) {
        uint32_t non_finite = 0;  // a vectorizable pass first; the index only when one is there
        for (int64_t i = 0; i < count; ++i) {
            uint32_t bits;
            std::memcpy(&bits, out + i, 4);
            non_finite |= static_cast<uint32_t>((bits & 0x7F800000u) == 0x7F800000u);
        }
        if (non_finite == 0) return;
        for (int64_t i = 0; i < count; ++i)
            if (!std::isfinite(out[i]))
                refuse_value(file, t, first * n + i, out[i], "(NaN or Inf) in the source",
                             "a checkpoint without NaN/Inf (llama-quantize refuses it too)");
    }
}

// F32 rows into the target type's bytes.
void f32_to_target(const std::string& file, const GgufTensorInfo& t, GgmlType target,
                   const float* values, int64_t first, int64_t rows, const float* imatrix,
                   uint8_t* out) {
    const int64_t n = t.ne[0];
    const int64_t count = rows * n;
    switch (target) {
        case GgmlType::F32:
            std::memcpy(out, values, static_cast<size_t>(count) * 4);
            return;
        case GgmlType::F16:
        case GgmlType::BF16:
            for (int64_t i = 0; i < count; ++i) {
                const uint16_t bits =
                    target == GgmlType::F16 ? float_to_half(values[i]) : float_to_bf16(values[i]);
                const float back =
                    target == GgmlType::F16 ? half_to_float(bits) : bf16_to_float(bits);
                if (!std::isfinite(back))
                    refuse_value(file, t, first * n + i, values[i],
                                 "does not fit " + ggml_type_name(target),
                                 "another type for this tensor (--tensor-type NAME=f32)");
                std::memcpy(out + 2 * i, &bits, 2);
            }
            return;
        default:
            quantize_rows(target, values, out, rows, n, imatrix);
    }
}

}  // namespace

TensorRows gguf_tensor_rows(const GgufFile& shard, const GgufTensorInfo& tensor) {
    TensorRows rows;
    rows.file = shard.display_name();
    rows.info = tensor;
    const std::span<const uint8_t> data = shard.tensor_data(tensor);
    const uint64_t src_row = row_bytes(tensor.type, tensor.ne[0]);
    rows.read = [data, src_row](int64_t first, int64_t count, std::vector<uint8_t>&) {
        return data.subspan(static_cast<uint64_t>(first) * src_row,
                            static_cast<uint64_t>(count) * src_row);
    };
    // Drops the mapped pages of a chunk's source rows once it is done, so the input held in
    // memory is about one chunk per thread even for a large tensor (an embedding).
    if (const MappedFile* mapping = shard.mapping()) {
        const uint64_t base = shard.data_offset() + tensor.offset;
        rows.release = [mapping, base, src_row](int64_t first, int64_t count) {
            mapping->release(base + static_cast<uint64_t>(first) * src_row,
                             static_cast<uint64_t>(count) * src_row);
        };
    }
    return rows;
}

void write_quantized_tensors(std::span<const TensorWrite> jobs, unsigned threads,
                             const TensorsDone& tensor_done, const std::function<void()>& poll) {
    // Every tensor's chunks of whole rows, never across an expert (imatrix slice) boundary, in
    // tensor order: one queue for one pool, so no worker waits at a tensor's end while another
    // finishes its last chunk (each chunk's output offset is known, the order is free).
    std::vector<Chunk> chunks;
    std::unique_ptr<std::atomic<size_t>[]> chunks_left(new std::atomic<size_t>[jobs.size()]);
    std::vector<size_t> empty_tensors;
    for (size_t j = 0; j < jobs.size(); ++j) {
        const GgufTensorInfo& t = jobs[j].source.info;
        const int64_t n = t.ne[0];
        const int64_t rows_per_expert = t.ne.size() > 1 ? t.ne[1] : 1;
        const int64_t total_rows =
            n > 0 ? static_cast<int64_t>(t.element_count() / static_cast<uint64_t>(n)) : 0;
        const int64_t rows_per_chunk = std::max<int64_t>(1, kChunkValues / std::max<int64_t>(1, n));
        size_t count = 0;
        for (int64_t row = 0; row < total_rows;) {
            const int64_t expert_end = (row / rows_per_expert + 1) * rows_per_expert;
            const int64_t rows = std::min({rows_per_chunk, expert_end - row, total_rows - row});
            chunks.push_back({j, row, rows});
            row += rows;
            ++count;
        }
        chunks_left[j] = count;
        if (count == 0) empty_tensors.push_back(j);
    }
    if (tensor_done)
        for (size_t j : empty_tensors) tensor_done(j);

    std::atomic<size_t> next{0};
    std::mutex error_mutex;
    std::exception_ptr error;
    std::atomic<bool> failed{false};
    const auto run_chunk = [&](const Chunk& chunk, std::vector<float>& values,
                               std::vector<uint8_t>& bytes, std::vector<uint8_t>& scratch) {
        const TensorWrite& job = jobs[chunk.tensor];
        const GgufTensorInfo& t = job.source.info;
        const std::string& file = job.source.file;
        const int64_t n = t.ne[0];
        const int64_t rows_per_expert = t.ne.size() > 1 ? t.ne[1] : 1;
        const bool copy = job.target == t.type;
        const bool float_source =
            t.type == GgmlType::F32 || t.type == GgmlType::F16 || t.type == GgmlType::BF16;
        const uint64_t dst_row = row_bytes(job.target, n);
        const auto write = [&](std::span<const uint8_t> out) {
            const uint64_t offset = job.out_offset + chunk.first_row * dst_row;
            job.out->pwrite(out, offset);
            if (job.written) job.written(offset, out.size());
            if (job.source.release) job.source.release(chunk.first_row, chunk.rows);
        };
        const std::span<const uint8_t> source =
            job.source.read(chunk.first_row, chunk.rows, scratch);
        if (copy && !float_source) return write(source);  // same quantized type: as it is
        values.resize(static_cast<size_t>(chunk.rows * n));
        source_to_f32(file, t, source.data(), chunk.first_row, chunk.rows, values.data());
        if (copy) return write(source);
        bytes.resize(static_cast<size_t>(chunk.rows * dst_row));
        const float* imatrix =
            job.imatrix ? job.imatrix + (chunk.first_row / rows_per_expert) * n : nullptr;
        f32_to_target(file, t, job.target, values.data(), chunk.first_row, chunk.rows, imatrix,
                      bytes.data());
        write(bytes);
    };
    const auto worker = [&](bool main) {
        std::vector<float> values;
        std::vector<uint8_t> bytes;
        std::vector<uint8_t> scratch;
        try {
            for (;;) {
                if (failed) break;
                if (main && poll) poll();
                const size_t c = next.load();
                if (c < chunks.size()) {
                    const TensorWrite& job = jobs[chunks[c].tensor];
                    if (job.side_work && job.side_work()) continue;
                }
                const size_t taken = next++;
                if (taken >= chunks.size()) break;
                const Chunk& chunk = chunks[taken];
                run_chunk(chunk, values, bytes, scratch);
                if (chunks_left[chunk.tensor].fetch_sub(1) == 1 && tensor_done)
                    tensor_done(chunk.tensor);
            }
        } catch (...) {
            std::lock_guard lock(error_mutex);
            if (!error) error = std::current_exception();
            failed = true;
        }
    };
    const unsigned count = static_cast<unsigned>(
        std::min<size_t>(std::max(1u, threads), std::max<size_t>(1, chunks.size())));
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < count; ++i) pool.emplace_back(worker, false);
    worker(true);
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
    if (poll) poll();
}

void write_quantized_tensor(const TensorWrite& job, unsigned threads) {
    write_quantized_tensors(std::span<const TensorWrite>(&job, 1), threads);
}

}  // namespace rebox
