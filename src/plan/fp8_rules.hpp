// FP8 block-quantized tensors (docs/formats.md §6): every value is e4m3 * scale, exact in double.
// No ggml block type holds those values, so the carriage is a float copy (F16, BF16 or F32, the
// smallest that holds every product) with --allow-lossless-fallback; a product that even binary32
// cannot hold (F32 scales with too many significant bits, or beyond F32's range) is a BLOCKER
// whatever the options, as no GGUF type carries it exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "plan/plan.hpp"

namespace rebox::plan_detail {

struct Fp8Fit {
    bool f16 = true, bf16 = true;  // every product exact in that type
    // The first product that is not a binary32 value (row-major index), with its parts.
    std::optional<uint64_t> not_f32;
    double code_value = 0, scale = 0, product = 0;
};
// Scans every value of the view (stops at the first product binary32 cannot hold).
Fp8Fit check_fp8_fit(const Fp8View& v);

// The plan of an FP8 tensor: the exactness check first, then the type (options.outtype f32 /
// f16 / bf16 as asked when exact; auto / q4_1: the smallest exact float type with
// --allow-lossless-fallback, else a Blocker saying what the copy costs). `exact_f32_role`: the
// architecture keeps the tensor F32 (a router): F32 whenever it is exact.
// With options.fp8_rounded_to (the lossy path of --quantize): that type (F32 for an
// exact_f32_role), each value the binary32 product rounded to it; only a NaN or infinite product is
// a BLOCKER.
bool plan_fp8(const SourceTensor& source, const PlanOptions& options, bool exact_f32_role,
              TensorPlan* plan, std::vector<Blocker>* blockers);

// The same for the experts of one stacked tensor (each an FP8 tensor of one shape): the smallest
// float type that holds every product of every expert, since a GGUF tensor has one type. Sets
// plan->type / encoding / note only.
bool plan_fp8_experts(const std::vector<const SourceTensor*>& experts, const PlanOptions& options,
                      TensorPlan* plan, std::vector<Blocker>* blockers);

// llama.cpp's convert_hf_to_gguf.py --outtype for an FP8 checkpoint: f32 / f16 / bf16 as asked;
// auto (ModelBase.__init__'s heuristic, run on the tensors as stored, before any FP8
// dequantization): the type of the first tensor of two or more dims that is BF16 or F16, the
// safetensors files in name order and each in its header's order, F16 when there is none.
// nullopt when the checkpoint has no FP8 tensor.
std::optional<GgmlType> fp8_converter_outtype(const SourceModel& source, OutType outtype);

}  // namespace rebox::plan_detail
