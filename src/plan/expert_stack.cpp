// plan_expert_stack: completeness and sameness of the experts of one stacked tensor, then one
// TensorPlan whose values are the experts' values one after the other.
#include "expert_stack.hpp"

#include "format/shape_text.hpp"
#include "fp8_rules.hpp"
#include "rebox/ggml_type.hpp"
#include "tensor_rules.hpp"

namespace rebox::plan_detail {
namespace {

using detail::shape_text;

// The scale dtype of a quantized tensor (FP4 views have byte scales: F32 stands for "same").
FloatDtype scale_dtype(const SourceTensor& t) {
    if (t.fp4) return FloatDtype::F32;
    if (t.fp8) return t.fp8->scale_dtype;
    return t.quant ? t.quant->scale_dtype : t.int_quant->scale_dtype;
}

// "4-bit, group 64, F16 scales" or "BF16": what must agree between the experts of one tensor.
std::string storage_text(const SourceTensor& t) {
    if (!t.is_quantized()) return std::string(float_dtype_name(t.float_dtype)) + " float";
    if (t.fp4)
        return std::string(t.fp4->origin) + (t.fp4->kind == Fp4Kind::mxfp4 ? " mxfp4" : " nvfp4");
    if (t.fp8) return std::string("FP8, ") + float_dtype_name(t.fp8->scale_dtype) + " block scales";
    return std::to_string(t.quant_bits()) + "-bit, group " + std::to_string(t.quant_group()) +
           ", " + float_dtype_name(scale_dtype(t)) + " scales" +
           (t.int_quant ? ", integer zero points" : "");
}

}  // namespace

bool plan_expert_stack(const SourceModel& source, const ExpertGroup& group,
                       const PlanOptions& options, TensorPlan* plan,
                       std::vector<Blocker>* blockers) {
    const size_t experts = group.sources.size();
    bool complete = experts > 0;
    for (size_t e = 0; e < experts; ++e) {
        if (group.sources[e]) continue;
        complete = false;
        blockers->push_back(Blocker{
            arch::expert_name(group.hf_pattern, static_cast<uint32_t>(e)),
            "expert " + std::to_string(e) + " of " + std::to_string(experts) +
                " (config.json num_experts) is missing: " + group.gguf_name + " stacks all of them",
            "add the missing expert's weight, or use the config.json that belongs to these "
            "weights"});
    }
    if (!complete) return false;

    const SourceTensor& first = source.tensors[*group.sources[0]];
    TensorPlan first_plan;
    if (!plan_tensor(first, *group.sources[0], group.gguf_name, options, &first_plan, blockers))
        return false;
    bool same = true;
    bool fp8_types_differ = false;  // FP8 experts exact in different float types: the widest
    for (size_t e = 1; e < experts; ++e) {
        const SourceTensor& t = source.tensors[*group.sources[e]];
        std::string differs;
        if (t.shape != first.shape)
            differs =
                "shape " + shape_text(t.shape) + " but expert 0 has " + shape_text(first.shape);
        else if (t.is_quantized() != first.is_quantized() ||
                 t.int_quant.has_value() != first.int_quant.has_value() ||
                 t.fp4.has_value() != first.fp4.has_value() ||
                 t.fp8.has_value() != first.fp8.has_value() ||
                 (t.fp4 && t.fp4->kind != first.fp4->kind) ||
                 (t.is_quantized() &&
                  (t.quant_bits() != first.quant_bits() || t.quant_group() != first.quant_group() ||
                   scale_dtype(t) != scale_dtype(first))) ||
                 (!t.is_quantized() && t.float_dtype != first.float_dtype))
            differs =
                storage_text(t) + " but expert 0 (" + first.name + ") is " + storage_text(first);
        if (differs.empty()) {
            TensorPlan expert_plan;
            if (!plan_tensor(t, *group.sources[e], group.gguf_name, options, &expert_plan,
                             blockers)) {
                same = false;
                continue;
            }
            if (expert_plan.type != first_plan.type ||
                expert_plan.encoding != first_plan.encoding) {
                if (t.fp8 && t.fp8->scale_dtype == first.fp8->scale_dtype)
                    fp8_types_differ = true;
                else
                    differs = "it plans as " + ggml_type_name(expert_plan.type) +
                              " but expert 0 as " + ggml_type_name(first_plan.type);
            }
            first_plan.zero_code_groups_get_zero_scale |=
                expert_plan.zero_code_groups_get_zero_scale;
        }
        if (differs.empty()) continue;
        same = false;
        blockers->push_back(
            Blocker{t.name,
                    "expert " + std::to_string(e) + " of " + group.gguf_name + " is " + differs +
                        ": a stacked GGUF tensor has one type and shape",
                    "re-export the experts of this layer with one bits/group/dtype"});
    }
    if (!same) return false;
    if (fp8_types_differ) {
        std::vector<const SourceTensor*> tensors;
        for (const auto& index : group.sources) tensors.push_back(&source.tensors[*index]);
        if (!plan_fp8_experts(tensors, options, &first_plan, blockers)) return false;
    }

    *plan = std::move(first_plan);
    const std::vector<int64_t> one = plan->ne;  // {cols, rows}
    plan->ne = {one.at(0), one.size() > 1 ? one[1] : 1, static_cast<int64_t>(experts)};
    plan->expert_values = first.element_count();
    for (const auto& index : group.sources) plan->expert_sources.push_back(*index);
    const auto nbytes = ggml_nbytes(plan->type, plan->ne);
    if (!nbytes) {
        blockers->push_back(Blocker{first.name,
                                    "no valid GGUF size for " + ggml_type_name(plan->type) +
                                        " with " + std::to_string(experts) + " experts",
                                    "check the tensor's shape"});
        return false;
    }
    plan->nbytes = *nbytes;
    plan->note = std::to_string(experts) + " experts stacked in order from " + group.hf_pattern +
                 "; " + plan->note;
    return true;
}

}  // namespace rebox::plan_detail
