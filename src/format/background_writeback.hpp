// Starts the disk writing ranges of AtomicOutputs from a thread of its own, so the threads that
// produce the bytes never wait for the disk queue (sync_file_range can block when the device is
// busy); the final fsync of AtomicOutput::commit() then finds most of the file already written.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

namespace rebox {

class AtomicOutput;

class BackgroundWriteback {
  public:
    BackgroundWriteback();
    // Stops after the ranges already queued (call before the outputs are committed or destroyed).
    ~BackgroundWriteback();
    BackgroundWriteback(const BackgroundWriteback&) = delete;
    BackgroundWriteback& operator=(const BackgroundWriteback&) = delete;

    // Queues [offset, offset+length) of `out` (written, not yet synced); thread-safe.
    void push(AtomicOutput& out, uint64_t offset, uint64_t length);
    // Waits until every queued range has been handed to the disk, then stops the thread.
    void finish() noexcept;

  private:
    struct Range {
        AtomicOutput* out;
        uint64_t offset, length;
    };
    void run();
    // Bytes queued before the thread is woken, and the gap two ranges may leave and still be one
    // call.
    static constexpr uint64_t kBatchBytes = uint64_t{8} << 20, kGapBytes = uint64_t{1} << 20;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Range> queue_;
    uint64_t queued_bytes_ = 0;  // since the last batch was taken
    bool batch_ready_ = false;   // queued_bytes_ reached kBatchBytes
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace rebox
