// convert --quantize: the planned (exact) conversion quantized on the way out, in one pass. Each
// tensor's rows are encoded from the checkpoint as the exact file would hold them, then handed to
// the quantize writer, so the result is the file `rebox quantize` would make of the exact file.
#pragma once

#include <chrono>
#include <vector>

#include "plan/plan.hpp"
#include "quantize_file/quantize_choices.hpp"
#include "rebox/rebox.hpp"
#include "source/source_model.hpp"

namespace rebox::convert_detail {

// llama-quantize's choices for the planned tensors and KVs (convert writes alignment 32).
// fp8_as_q8: the tensors dequantized from FP8 are Q8_0 whatever the recipe says (--fp8-as-q8).
QuantizeChoices choose_for_plan(const Plan& plan, const SourceModel& source,
                                const QuantizeOptions& options, bool fp8_as_q8 = false);

// The report lines of the choices (outputs and sizes as laid out).
QuantizeReport quantize_report(const Plan& plan, const QuantizeChoices& choices);

// Writes, verifies (options.verify) and commits the quantized outputs of a plan without BLOCKERs
// (the report's plan is the caller's to fill), and the mmproj (may be null) exactly beside them,
// all or nothing.
ConvertReport convert_quantized(const ConvertOptions& options, const SourceModel& source,
                                const Plan& plan, std::chrono::steady_clock::time_point start,
                                const Plan* mmproj = nullptr,
                                const std::filesystem::path& mmproj_path = {});

}  // namespace rebox::convert_detail
