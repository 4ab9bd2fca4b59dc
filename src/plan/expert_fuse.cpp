// plan_expert_fuse: the two halves of mlx-lm's SwitchGLU gate / up checked against each other,
// then one TensorPlan whose pieces take each expert's gate rows, then its up rows.
#include "expert_fuse.hpp"

#include "format/shape_text.hpp"
#include "plan/row_moves.hpp"
#include "rebox/ggml_type.hpp"
#include "tensor_rules.hpp"

namespace rebox::plan_detail {

using detail::shape_text;

namespace {

// "4-bit, group 64" or "BF16": how a half is stored.
std::string storage(const SourceTensor& t) {
    if (!t.is_quantized()) return float_dtype_name(t.float_dtype);
    return std::to_string(t.quant_bits()) + "-bit, group " + std::to_string(t.quant_group());
}

}  // namespace

bool plan_expert_fuse(const SourceModel& source, const FuseGroup& group, uint32_t experts,
                      const PlanOptions& options, TensorPlan* plan,
                      std::vector<Blocker>* blockers) {
    if (!group.gate || !group.up) {
        const SourceTensor& present = source.tensors[group.gate ? *group.gate : *group.up];
        blockers->push_back(Blocker{
            present.name,
            std::string("has no ") + (group.gate ? "up_proj" : "gate_proj") + " beside it: " +
                group.gguf_name + " holds each expert's gate rows, then its up rows",
            "add the layer's other switch_glu projection, as mlx-lm saves both"});
        return false;
    }
    const SourceTensor& gate = source.tensors[*group.gate];
    const SourceTensor& up = source.tensors[*group.up];
    if (gate.shape.size() != 3 || gate.shape[0] != static_cast<int64_t>(experts)) {
        blockers->push_back(Blocker{gate.name,
                                    "shape " + shape_text(gate.shape) + " is not [" +
                                        std::to_string(experts) +
                                        " (config.json num_experts), rows, columns]",
                                    "use the config.json that belongs to these weights"});
        return false;
    }
    if (up.shape != gate.shape) {
        blockers->push_back(Blocker{up.name,
                                    "shape " + shape_text(up.shape) + " but " + gate.name +
                                        " has " + shape_text(gate.shape) + ": " + group.gguf_name +
                                        " fuses the two expert by expert",
                                    "use the checkpoint's own gate and up projections"});
        return false;
    }
    TensorPlan gate_plan, up_plan;
    if (!plan_tensor(gate, *group.gate, group.gguf_name, options, &gate_plan, blockers) ||
        !plan_tensor(up, *group.up, group.gguf_name, options, &up_plan, blockers))
        return false;
    if (gate_plan.type != up_plan.type || gate_plan.encoding != up_plan.encoding ||
        gate.quant_bits() != up.quant_bits() || gate.quant_group() != up.quant_group()) {
        blockers->push_back(
            Blocker{up.name,
                    "is " + storage(up) + " (planned " + ggml_type_name(up_plan.type) + ") but " +
                        gate.name + " is " + storage(gate) + " (planned " +
                        ggml_type_name(gate_plan.type) + "): the two halves of " + group.gguf_name +
                        " are encoded as one tensor and must be stored alike",
                    "re-export with one bits / group_size for switch_glu.gate_proj and up_proj, as "
                    "mlx-lm's uniform recipes give them"});
        return false;
    }
    const uint64_t rows = static_cast<uint64_t>(gate.shape[1]);
    const uint64_t columns = static_cast<uint64_t>(gate.shape[2]);
    const int64_t group_values = gate.quant_group();
    if (const auto problem = row_move_problem(gate_plan.type, columns,
                                              group_values > 0 ? uint64_t(group_values) : 0)) {
        blockers->push_back(Blocker{
            gate.name, *problem + ", so its rows cannot move into " + group.gguf_name + " exactly",
            "--outtype f32 (every value moves on its own), or re-export "
            "with rows and groups that are whole blocks of 32"});
        return false;
    }
    *plan = std::move(gate_plan);
    plan->zero_code_groups_get_zero_scale |= up_plan.zero_code_groups_get_zero_scale;
    plan->ne = {static_cast<int64_t>(columns), static_cast<int64_t>(2 * rows),
                static_cast<int64_t>(experts)};
    plan->expert_values = rows * columns;
    plan->expert_sources.clear();
    plan->expert_firsts.clear();
    for (uint64_t e = 0; e < experts; ++e)
        for (const size_t index : {*group.gate, *group.up}) {
            plan->expert_sources.push_back(index);
            plan->expert_firsts.push_back(e * rows * columns);
        }
    const auto nbytes = ggml_nbytes(plan->type, plan->ne);
    if (!nbytes) {
        blockers->push_back(Blocker{gate.name,
                                    "no valid GGUF size for " + ggml_type_name(plan->type) +
                                        " with " + std::to_string(experts) + " experts",
                                    "check the tensor's shape"});
        return false;
    }
    plan->nbytes = *nbytes;
    plan->note = "each expert's gate rows (" + gate.name + "), then its up rows (" + up.name +
                 "); " + plan->note;
    return true;
}

}  // namespace rebox::plan_detail
