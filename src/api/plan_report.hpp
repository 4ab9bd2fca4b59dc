// The public PlanReport built from the internal plan and the source it was made from; shared by
// plan_model(), convert_model() (api/entry_points.cpp) and the CLI.
#pragma once

#include "plan/plan.hpp"
#include "rebox/rebox.hpp"
#include "source/source_model.hpp"

namespace rebox {

// `source` may be null (the source-side fields stay empty). The plan's KVs (the whole vocabulary)
// are moved, not copied: the plan is spent.
PlanReport make_plan_report(Plan&& plan, const SourceModel* source);

}  // namespace rebox
