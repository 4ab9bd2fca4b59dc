// Short text summaries of a plan shared by `rebox plan` and `rebox convert`.
#pragma once

#include <string>

#include "rebox/rebox.hpp"

namespace rebox::cli {

// How many tensors of each GGUF type the plan writes, e.g. "113 F32, 197 Q4_1" (by type name).
std::string type_counts(const PlanReport& plan);
// The same for the types a quantization writes.
std::string quantized_type_counts(const QuantizeReport& report);

}  // namespace rebox::cli
