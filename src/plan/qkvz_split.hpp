// Qwen3-Next's in_proj_qkvz split (RowTransform::qkvz_qkv / qkvz_z; docs/architectures.md,
// qwen3next): the part's rows and its ne from the planned source tensor. Each part gathers whole
// rows from the source's per-key-head groups, so any encoding whose blocks stay inside one row
// moves exactly (a BLOCKER naming the tensor otherwise).
#pragma once

#include <cstdint>
#include <vector>

#include "arch/architecture.hpp"
#include "plan/plan.hpp"

namespace rebox::plan_detail {

// Does nothing (true) for other transforms. Runs before the shape check, which then sees the
// part's ne ({hidden, part rows}). `source_group`: the source's quantization group (0: float).
bool attach_qkvz_split(arch::RowTransform transform, const ModelConfig& config,
                       const SourceTensor& source, uint64_t source_group, TensorPlan* plan,
                       std::vector<Blocker>* blockers);

}  // namespace rebox::plan_detail
