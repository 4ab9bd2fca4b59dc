// Progress display for long conversions: percent, MB written, MB/s.
#include "progress_line.hpp"

#include <unistd.h>

#include <cstdio>

namespace rebox::convert_detail {

ProgressLine::ProgressLine(bool enabled, std::string label, uint64_t total)
    : enabled_(enabled && ::isatty(STDERR_FILENO) == 1),
      label_(std::move(label)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::tick() {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double done_mb = static_cast<double>(done_.load(std::memory_order_relaxed)) / 1e6;
    const double pct = total_ ? 100.0 * done_mb * 1e6 / static_cast<double>(total_) : 100.0;
    std::fprintf(stderr, "\r%s %5.1f%%  %8.1f MB  %7.1f MB/s", label_.c_str(), pct, done_mb,
                 seconds > 0 ? done_mb / seconds : 0.0);
    std::fflush(stderr);
}

void ProgressLine::finish() {
    if (enabled_ && drawn_) {
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
        drawn_ = false;
    }
}

}  // namespace rebox::convert_detail
