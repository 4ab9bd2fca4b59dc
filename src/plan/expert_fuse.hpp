// Fusing mlx-lm's split gate and up experts (RowTransform::fused_gate_rows / fused_up_rows) into
// the one GGUF tensor llama.cpp's converter keeps from transformers' experts.gate_up_proj
// (gemma4's ffn_gate_up_exps, Gemma4Model.modify_tensors): gate [E, F, cols] and up [E, F, cols]
// become [E, 2F, cols], each expert's F gate rows, then its F up rows (mlx-lm's gemma4_text
// sanitize split gate_up_proj at dim -2 into those halves). Whole rows move, each with its own
// groups: exact for every encoding whose blocks lie in one row and one group.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace rebox::plan_detail {

// The two sources of one fused tensor, gathered while walking the source tensors.
struct FuseGroup {
    std::string gguf_name;           // "blk.0.ffn_gate_up_exps.weight"
    std::optional<size_t> gate, up;  // into SourceModel::tensors
};

// Plans the fused tensor: both halves present, each [experts, F, cols] with the same shape,
// storage and planned type, and rows that move whole in that type. Otherwise appends one Blocker
// (naming the tensor at fault) and returns false. The plan's pieces alternate gate and up, expert
// by expert (TensorPlan::expert_sources / expert_firsts).
bool plan_expert_fuse(const SourceModel& source, const FuseGroup& group, uint32_t experts,
                      const PlanOptions& options, TensorPlan* plan, std::vector<Blocker>* blockers);

}  // namespace rebox::plan_detail
