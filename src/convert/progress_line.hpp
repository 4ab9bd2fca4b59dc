// A one-line progress display on stderr ("\r"-rewritten), shown only when enabled and stderr is a
// TTY.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace rebox::convert_detail {

class ProgressLine {
  public:
    ProgressLine(bool enabled, std::string label, uint64_t total);
    ~ProgressLine();
    void add(uint64_t done) { done_.fetch_add(done, std::memory_order_relaxed); }
    // Redraws at most every 100 ms; call from one thread.
    void tick();
    void finish();

  private:
    bool enabled_;
    std::string label_;
    uint64_t total_;
    std::atomic<uint64_t> done_{0};
    std::chrono::steady_clock::time_point start_, last_;
    bool drawn_ = false;
};

}  // namespace rebox::convert_detail
