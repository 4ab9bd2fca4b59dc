// The conversion pipeline after the plan: write the GGUF (or its shards) into temporary files with
// all cores, verify them while they are written, and commit them only when every check passed.
#pragma once

#include <chrono>
#include <filesystem>

#include "plan/plan.hpp"
#include "rebox/rebox.hpp"
#include "source/source_model.hpp"

namespace rebox::convert_detail {

// Writes, verifies (options.verify) and commits the outputs of a plan without BLOCKERs (exact, or
// quantized on the way out when options.quantize is set). The report's outputs, sizes, verify
// report and timings are filled; its plan is the caller's to fill (api/entry_points.cpp).
// `mmproj` (may be null; exact conversion only): the vision tower's plan, written at
// mmproj_path and committed together with the text model's files, all or nothing.
ConvertReport write_conversion(const ConvertOptions& options, const SourceModel& source,
                               const Plan& plan, std::chrono::steady_clock::time_point start,
                               const Plan* mmproj = nullptr,
                               const std::filesystem::path& mmproj_path = {});

}  // namespace rebox::convert_detail
