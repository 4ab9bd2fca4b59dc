// Writes one quantized tensor to its place in the output: the source rows fetched in chunks
// (from a mapped GGUF for `rebox quantize`, encoded from the checkpoint for `convert --quantize`),
// checked (no NaN/Inf), widened to F32 (F16/BF16 exactly, quantized tensors through
// dequantize_row), quantized with quantize_rows (or narrowed to F16/BF16) on `threads` threads,
// and written with pwrite. A tensor whose type does not change is copied as it is (its float
// values still checked). Memory: one chunk of rows per thread; the source of each finished chunk
// is released.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "format/atomic_output.hpp"
#include "format/gguf_file.hpp"

namespace rebox {

// Where a tensor's rows come from, in the source type's bytes.
struct TensorRows {
    std::string file;     // what error lines name
    GgufTensorInfo info;  // name, ne and type of the source tensor (offset unused)
    // The bytes of rows [first, first + rows): a view of mapped data, or written into `scratch`.
    // Called from worker threads at once, each with its own scratch.
    std::function<std::span<const uint8_t>(int64_t first, int64_t rows,
                                           std::vector<uint8_t>& scratch)>
        read;
    // Optional: called once rows [first, first + rows) are no longer needed.
    std::function<void(int64_t first, int64_t rows)> release;
};

// The rows of a tensor of a mapped GGUF file, its pages released as chunks finish.
TensorRows gguf_tensor_rows(const GgufFile& shard, const GgufTensorInfo& tensor);

struct TensorWrite {
    TensorRows source;
    GgmlType target = GgmlType::F32;
    const float* imatrix = nullptr;  // ne[0] * ne[2] weights (one slice per expert) or nullptr
    AtomicOutput* out = nullptr;
    uint64_t out_offset = 0;  // absolute offset of the tensor's data in `out`
    // Optional: called (from the worker thread) after each chunk's bytes are written.
    std::function<void(uint64_t offset, uint64_t bytes)> written;
    // Optional: other work the workers do first, before each chunk, while it returns true (the
    // verification of what is already written, so that it keeps close behind the writing).
    std::function<bool()> side_work;
};

// Throws Error (input class) naming the tensor for a non-finite source value and for a value
// that F16/BF16 cannot hold.
void write_quantized_tensor(const TensorWrite& job, unsigned threads);

// Called once per tensor, from whichever worker wrote its last chunk (workers may call it at the
// same time), with the tensor's index in the jobs.
using TensorsDone = std::function<void(size_t tensor)>;

// Writes every job on one pool of `threads` workers over all their chunks in order (no barrier
// between tensors: a worker takes the next tensor's chunks while another finishes the last ones).
// `poll`, if given, is called on the calling thread between its chunks and once at the end (a
// progress report; it may throw to stop). The first error stops every worker and is rethrown once
// all have stopped; what was written before it is left to the caller to discard.
void write_quantized_tensors(std::span<const TensorWrite> jobs, unsigned threads,
                             const TensorsDone& tensor_done = {},
                             const std::function<void()>& poll = {});

}  // namespace rebox
