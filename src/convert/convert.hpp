// The conversion pipeline after the plan: write the GGUF (or its shards) into temporary files with
// all cores, verify them while they are written, and commit them only when every check passed.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <vector>

#include "convert_outputs.hpp"
#include "format/atomic_output.hpp"
#include "format/gguf_shards.hpp"
#include "plan/plan.hpp"
#include "rebox/rebox.hpp"
#include "source/source_model.hpp"

namespace rebox::convert_detail {

// Writes, verifies (options.verify) and commits the outputs of a plan without BLOCKERs (exact, or
// quantized on the way out when options.quantize is set). The report's outputs, sizes, verify
// report and timings are filled; its plan is the caller's to fill (api/entry_points.cpp).
// `mmproj` (may be null): the vision tower's plan, written exactly at mmproj_path (also beside a
// quantized text model: llama-quantize leaves the projector as converted) and committed together
// with the text model's files, all or nothing.
ConvertReport write_conversion(const ConvertOptions& options, const SourceModel& source,
                               const Plan& plan, std::chrono::steady_clock::time_point start,
                               const Plan* mmproj = nullptr,
                               const std::filesystem::path& mmproj_path = {});

// The mmproj file of a conversion (both paths): its layout and size into `result`, its path
// refused when it is one of the text model's outputs, and added to `targets`.
struct MmprojOutput {
    const Plan* plan = nullptr;  // null: no mmproj
    ShardedLayout layout;
    std::unique_ptr<AtomicOutput> file;
};
MmprojOutput plan_mmproj_output(const Plan* mmproj, const std::filesystem::path& mmproj_path,
                                ConvertReport& result, std::vector<std::filesystem::path>& targets);
// Its temporary file (an existing target without --force refused before any write) with the
// header written: after the text model's outputs are opened.
void open_mmproj_output(const ConvertOptions& options, const ConvertReport& result,
                        MmprojOutput& mmproj);
// After the text model's tensors: the mmproj's tensors written exactly, verify's own read-back of
// it folded into the text model's verdict, and the file committed (or discarded) with them.
void write_mmproj_output(const ConvertOptions& options, const SourceModel& source,
                         const ConvertReport& result, unsigned threads, MmprojOutput& mmproj,
                         ConvertOutputs& outputs);

}  // namespace rebox::convert_detail
