// Qwen3-VL-MoE's fused experts (RowTransform::experts_t_first_half / experts_t_second_half /
// experts_t; docs/architectures.md, qwen3vlmoe): transformers stores them transposed against
// llama.cpp's layout, gate_up_proj [E, hidden, 2F] and down_proj [E, F, hidden], and
// Qwen3VLMoeTextModel.modify_tensors permutes each expert (gate_up split at its last dim). Single
// values move, so the part is exact for a float source (F32 / F16 / BF16 kept) and a BLOCKER for a
// quantized one (its groups run along the rows the transpose turns into columns).
#pragma once

#include <vector>

#include "arch/architecture.hpp"
#include "plan/plan.hpp"

namespace rebox::plan_detail {

// Does nothing (true) for other transforms. Runs before the shape check, which then sees the
// part's ne ({hidden, F, E} for gate / up, {F, hidden, E} for down).
bool attach_expert_transpose(arch::RowTransform transform, const SourceTensor& source,
                             TensorPlan* plan, std::vector<Blocker>* blockers);

}  // namespace rebox::plan_detail
