// --fp8-as-q8 (llama.cpp's convert_hf_to_gguf.py option of that name): which planned tensors the
// converter's tensor_force_quant makes Q8_0.
#pragma once

#include "plan/plan.hpp"
#include "source/source_model.hpp"

namespace rebox::plan_detail {

// A tensor of two or more dims dequantized from FP8 (one FP8 source, or a stack of FP8 experts):
// the converter writes it as Q8_0 of its binary32 products, before and regardless of the rules
// that keep other tensors F32 (the plan must be made with PlanOptions::fp8_rounded_to = F32).
bool fp8_forced_q8_0(const SourceModel& source, const TensorPlan& tp);

}  // namespace rebox::plan_detail
