// Progress display for long conversions: stage, percent, MB written, MB/s.
#include "progress_line.hpp"

#include <unistd.h>

#include <cstdio>

namespace rebox::cli {

ProgressLine::ProgressLine(bool enabled)
    : enabled_(enabled && ::isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { finish(); }

ProgressCallback ProgressLine::callback() {
    if (!enabled_) return {};
    return [this](const Progress& progress) {
        draw(progress);
        return true;
    };
}

void ProgressLine::draw(const Progress& progress) {
    drawn_ = true;
    const double pct = progress.total ? 100.0 * static_cast<double>(progress.done) /
                                            static_cast<double>(progress.total)
                                      : 100.0;
    if (progress.stage == "convert") {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        const double done_mb = static_cast<double>(progress.done) / 1e6;
        std::fprintf(stderr, "\rrebox convert %5.1f%%  %8.1f MB  %7.1f MB/s", pct, done_mb,
                     seconds > 0 ? done_mb / seconds : 0.0);
    } else {
        std::fprintf(stderr, "\r\033[Krebox %.*s %5.1f%%", static_cast<int>(progress.stage.size()),
                     progress.stage.data(), pct);
    }
    std::fflush(stderr);
}

void ProgressLine::finish() {
    if (enabled_ && drawn_) {
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
        drawn_ = false;
    }
}

}  // namespace rebox::cli
