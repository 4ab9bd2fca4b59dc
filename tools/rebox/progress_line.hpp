// The CLI's one-line progress display on stderr ("\r"-rewritten), drawn from the library's
// progress callback; shown only when enabled and stderr is a TTY.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "rebox/rebox.hpp"

namespace rebox::cli {

class ProgressLine {
  public:
    explicit ProgressLine(bool enabled);
    ~ProgressLine();
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;
    // A callback for ConvertOptions/VerifyOptions that draws this line (never cancels); empty when
    // the line is disabled, so the library does not even start its ticker.
    ProgressCallback callback();
    void finish();  // clears the line

  private:
    void draw(const Progress& progress);
    bool enabled_;
    std::chrono::steady_clock::time_point start_;
    bool drawn_ = false;
};

}  // namespace rebox::cli
