// NVFP4 per-tensor factors (ModelOpt weight_scale_2, compressed-tensors 1/global_scale) as
// llama.cpp's F32 <tensor>.scale companions, or BLOCKERs where the architecture's graph would
// ignore them (global_scale.cpp).
#pragma once

#include "plan/plan.hpp"

namespace rebox::plan_detail {

// Appends a computed F32 `<name>.scale` TensorPlan for each planned tensor whose source carries a
// factor other than 1, or a Blocker on plan.blockers (graph ignores it, dense FFN with a bias, an
// inexact compressed-tensors factor without options.allow_inexact_global_scale).
void plan_global_scales(const SourceModel& source, const PlanOptions& options, Plan& plan);

}  // namespace rebox::plan_detail
