// Per-tensor decision: from a SourceTensor and its GGUF name, the GGUF type, ne, byte size and
// encoding, or the blockers that say why it cannot be carried exactly (spec mcq-v1 "When a tensor
// can become GGUF Q4_1 without changing one value").
#pragma once

#include <string>
#include <vector>

#include "arch/architecture.hpp"
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
// `fp8_lossy`: an FP8 source's binary32 products, exact or not (PlanOptions::fp8_rounded_to).
bool plan_exact_f32(const SourceTensor& source, size_t source_index, const std::string& gguf_name,
                    const std::string& arch, const std::string& what, TensorPlan* plan,
                    std::vector<Blocker>* blockers, bool fp8_lossy = false);

// A value computed from the source (gemma's norm + 1, Qwen3.5's -exp(A_log)) as llama.cpp's
// converter computes it, F32; false (with a Blocker) for a quantized source.
bool attach_value_transform(arch::ValueTransform transform, const SourceTensor& source,
                            TensorPlan* plan, std::vector<Blocker>* blockers);

// The model-card KVs (general.type first, then name, size label, ...: model/model_card_metadata)
// over the planned tensors.
std::vector<GgufKV> card_kvs(const SourceModel& source, const PlanOptions& options,
                             const std::vector<TensorPlan>& tensors);

// general.file_type for the planned tensors as llama.cpp's converter names a file (docs/gguf.md
// §2.4).
LlamaFileType file_type(const Plan& plan, const PlanOptions& options);

}  // namespace rebox::plan_detail
