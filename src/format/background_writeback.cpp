// BackgroundWriteback: one thread pops written ranges and calls AtomicOutput::start_writeback.
#include "format/background_writeback.hpp"

#include "format/atomic_output.hpp"

namespace rebox {

BackgroundWriteback::BackgroundWriteback() : thread_([this] { run(); }) {}

BackgroundWriteback::~BackgroundWriteback() { finish(); }

void BackgroundWriteback::push(AtomicOutput& out, uint64_t offset, uint64_t length) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back({&out, offset, length});
    }
    wake_.notify_one();
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
    for (;;) {
        Range range;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, nothing left
            range = queue_.front();
            queue_.pop_front();
        }
        range.out->start_writeback(range.offset, range.length);
    }
}

}  // namespace rebox
