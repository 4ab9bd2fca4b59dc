// The mapping of the internal plan to the public PlanReport.
#include "api/plan_report.hpp"

namespace rebox {

PlanReport make_plan_report(Plan&& plan, const SourceModel* source) {
    PlanReport report;
    if (source != nullptr) report.format = source->format.empty() ? "mcq-v1" : source->format;
    report.arch = plan.arch;
    report.source_bytes = plan.source_bytes;
    if (plan.blockers.empty()) report.file_bytes = plan_file_bytes(plan);
    for (const TensorPlan& tp : plan.tensors) {
        PlannedTensor t;
        t.gguf_name = tp.gguf_name;
        t.type = tp.type;
        t.ne = tp.ne;
        t.nbytes = tp.nbytes;
        t.encoding = encoding_name(tp.encoding);
        t.note = tp.note;
        t.experts = tp.expert_sources.size();
        t.expert_values = tp.expert_values;
        if (!tp.expert_firsts.empty()) {  // fused from two sources: two pieces per expert
            t.experts /= 2;
            t.expert_values *= 2;
        }
        t.zero_code_groups_get_zero_scale = tp.zero_code_groups_get_zero_scale;
        if (source != nullptr && !tp.is_computed() && tp.source_index < source->tensors.size()) {
            const SourceTensor& st = source->tensors[tp.source_index];
            t.source_name = st.name;
            t.source_shape = st.shape;
            if (st.fp4) {
                t.bits = 4;
                t.group = st.fp4->group;
                t.scale_dtype = st.fp4->kind == Fp4Kind::mxfp4 ? "E8M0" : "E4M3";
            } else if (st.fp8) {
                t.bits = 8;
                t.group = st.fp8->block_rows * st.fp8->block_cols;
                t.scale_dtype = float_dtype_name(st.fp8->scale_dtype);
                t.quant_method = "fp8";
            } else if (st.quant) {
                t.bits = st.quant->bits;
                t.group = st.quant->group;
                t.scale_dtype = float_dtype_name(st.quant->scale_dtype);
            } else if (st.int_quant) {
                t.bits = st.int_quant->bits;
                t.group = st.int_quant->group;
                t.scale_dtype = float_dtype_name(st.int_quant->scale_dtype);
                t.quant_method = st.int_quant->method;
            } else {
                t.source_dtype = float_dtype_name(st.float_dtype);
            }
        }
        report.tensors.push_back(std::move(t));
    }
    report.blockers = std::move(plan.blockers);
    report.notes = std::move(plan.notes);
    report.kvs = std::move(plan.kvs);
    return report;
}

}  // namespace rebox
