// Per-tensor decision: from a SourceTensor and its GGUF name, the GGUF type, ne, byte size and
// encoding, or the blockers that say why it cannot be carried exactly (spec mcq-v1 "When a tensor
// can become GGUF Q4_1 without changing one value").
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace rebox::plan_detail {

// Appends to `blockers` and returns false when the tensor cannot be planned.
bool plan_tensor(const SourceTensor& source, size_t source_index, const std::string& gguf_name,
                 const PlanOptions& options, TensorPlan* plan, std::vector<Blocker>* blockers);

// A tensor whose role the architecture declares always-F32 (the MoE router, an encoder's position
// and token-type tables; docs/architectures.md):
// exact binary32 values whatever the outtype: code*scale+min evaluated in binary32 for a quantized
// source (any bits and group: no block type is involved), the float values widened otherwise.
// `arch` names the registry table and `what` the tensor's role ("router") in the note.
bool plan_exact_f32(const SourceTensor& source, size_t source_index, const std::string& gguf_name,
                    const std::string& arch, const std::string& what, TensorPlan* plan,
                    std::vector<Blocker>* blockers);

}  // namespace rebox::plan_detail
