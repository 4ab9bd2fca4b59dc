// Stacking per-expert source tensors (HF / mcq-v1 / float: one tensor per expert) into one 3-D GGUF
// tensor [E, rows, cols] (ne {cols, rows, E}), experts in index order (docs/architectures.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "arch/architecture.hpp"
#include "plan/plan.hpp"

namespace rebox::plan_detail {

// The per-expert sources of one stacked GGUF tensor, gathered while walking the source tensors.
struct ExpertGroup {
    std::string gguf_name;                       // "blk.0.ffn_up_exps.weight"
    std::string hf_pattern;                      // "layers.0.mlp.experts.{e}.up_proj.weight"
    std::vector<std::optional<size_t>> sources;  // index into SourceModel::tensors, by expert
};

// Plans the stacked tensor: every expert present, each plannable alone, and every expert with the
// same shape, quantization (bits, group, scale dtype) or float dtype and planned type as expert 0
// (a GGUF tensor has one type; FP8 experts exact in different float types take the smallest type
// exact for all, plan/fp8_rules.hpp). Otherwise appends one Blocker per problem (naming the
// expert's tensor) and returns false.
bool plan_expert_stack(const SourceModel& source, const ExpertGroup& group,
                       const PlanOptions& options, TensorPlan* plan,
                       std::vector<Blocker>* blockers);

}  // namespace rebox::plan_detail
