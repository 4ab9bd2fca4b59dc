// deepseek2's kv_b_proj split (RowTransform::mla_k_b / mla_v_b; docs/architectures.md, deepseek2):
// the part's ne and its move from the planned source tensor. attn_v_b is each head's v rows
// (whole rows: exact wherever rows may move); attn_k_b is each head's nope rows transposed, which
// single values only survive: a float source, or a quantized one carried as exact F32 with
// --allow-lossless-fallback (a BLOCKER naming the tensor otherwise).
#pragma once

#include <vector>

#include "arch/architecture.hpp"
#include "plan/plan.hpp"

namespace rebox::plan_detail {

// Does nothing (true) for other transforms. Runs before the shape check, which then sees the
// part's ne ([ne0, ne1, heads]).
bool attach_mla_split(arch::RowTransform transform, const ModelConfig& config,
                      const SourceTensor& source, const PlanOptions& options, TensorPlan* plan,
                      std::vector<Blocker>* blockers);

}  // namespace rebox::plan_detail
