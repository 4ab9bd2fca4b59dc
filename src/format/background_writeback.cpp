// BackgroundWriteback: one thread pops written ranges and calls AtomicOutput::start_writeback.
#include "format/background_writeback.hpp"

#include <algorithm>
#include <functional>

#include "format/atomic_output.hpp"

namespace rebox {

BackgroundWriteback::BackgroundWriteback() : thread_([this] { run(); }) {}

BackgroundWriteback::~BackgroundWriteback() { finish(); }

void BackgroundWriteback::push(AtomicOutput& out, uint64_t offset, uint64_t length) {
    bool wake = false;
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({&out, offset, length});
        queued_bytes_ += length;
        // Ranges gather until a batch is worth a call: a big MoE writes tens of thousands of
        // expert slices of a few KB each.
        if (queued_bytes_ >= kBatchBytes && !batch_ready_) batch_ready_ = wake = true;
    }
    if (wake) wake_.notify_one();
}

void BackgroundWriteback::finish() noexcept {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ && !thread_.joinable()) return;
        stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
}

void BackgroundWriteback::run() {
    std::deque<Range> batch;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || batch_ready_; });
            if (queue_.empty()) return;  // stopping, nothing left
            batch.swap(queue_);
            queued_bytes_ = 0;
            batch_ready_ = false;
        }
        // One call per run of ranges of an output that touch or nearly touch: the gap's pages
        // are either clean (nothing to write) or someone else's, written a little earlier.
        std::sort(batch.begin(), batch.end(), [](const Range& a, const Range& b) {
            return a.out != b.out ? std::less<AtomicOutput*>{}(a.out, b.out) : a.offset < b.offset;
        });
        for (size_t i = 0; i < batch.size();) {
            uint64_t begin = batch[i].offset, end = begin + batch[i].length;
            size_t j = i + 1;
            while (j < batch.size() && batch[j].out == batch[i].out &&
                   batch[j].offset <= end + kGapBytes) {
                end = std::max(end, batch[j].offset + batch[j].length);
                ++j;
            }
            batch[i].out->start_writeback(begin, end - begin);
            i = j;
        }
        batch.clear();
    }
}

}  // namespace rebox
