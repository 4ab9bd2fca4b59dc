// The plan of the mmproj file (the vision tower and projector llama.cpp's mtmd loads beside the
// text GGUF): which source tensors it holds under which GGUF names, their types by the vision
// record's dtype rules and rebox's exactness rules, and the clip.* KV set, as llama.cpp's
// MmprojModel and the family's subclass write them (docs/architectures.md "Vision").
#pragma once

#include <optional>

#include "plan/plan.hpp"

namespace rebox {

// nullopt when the checkpoint has no vision tower a record converts (no vision_config, a family
// without a vision record, or no source tensor under the record's prefixes). Otherwise the plan
// (arch "clip"), whose blockers say what keeps it from being written. Throws rebox::Error (input)
// for an unreadable or malformed config.json / preprocessor_config.json / processor_config.json.
std::optional<Plan> make_mmproj_plan(const SourceModel& source, const PlanOptions& options);

}  // namespace rebox
