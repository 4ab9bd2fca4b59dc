// The conversion pipeline after the plan: write the GGUF (or its shards) into temporary files with
// all cores, verify them while they are written, and commit them only when every check passed.
#pragma once

#include <chrono>

#include "plan/plan.hpp"
#include "rebox/rebox.hpp"
#include "source/source_model.hpp"

namespace rebox::convert_detail {

// Writes, verifies (options.verify) and commits the outputs of a plan without BLOCKERs (exact, or
// quantized on the way out when options.quantize is set). The report's outputs, sizes, verify
// report and timings are filled; its plan is the caller's to fill (api/entry_points.cpp).
ConvertReport write_conversion(const ConvertOptions& options, const SourceModel& source,
                               const Plan& plan, std::chrono::steady_clock::time_point start);

}  // namespace rebox::convert_detail
