// Qwen3-VL-MoE's transposed fused experts (expert_transpose.hpp): each expert of the source
// [E, R, C] read as its transpose [C', R] (gate / up: C' the first or last half of C).
#include "plan/expert_transpose.hpp"

#include <string>

#include "format/shape_text.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox::plan_detail {

bool attach_expert_transpose(arch::RowTransform transform, const SourceTensor& source,
                             TensorPlan* plan, std::vector<Blocker>* blockers) {
    using arch::RowTransform;
    const bool down = transform == RowTransform::experts_t;
    const bool half = transform == RowTransform::experts_t_first_half ||
                      transform == RowTransform::experts_t_second_half;
    if (!down && !half) return true;
    const std::vector<int64_t>& shape = source.shape;
    if (shape.size() != 3 || shape[0] <= 0 || shape[1] <= 0 || shape[2] <= 0 ||
        (half && shape[2] % 2 != 0)) {
        blockers->push_back(Blocker{
            source.name,
            "shape " + rebox::detail::shape_text(shape) + " is not [experts, rows, columns]" +
                (half ? " with an even number of columns (gate, then up)" : ""),
            "use the checkpoint's own fused expert tensors"});
        return false;
    }
    if (source.is_quantized()) {
        blockers->push_back(Blocker{
            source.name,
            "the fused experts are stored transposed against llama.cpp's layout; a quantized "
            "tensor's groups run along the rows the transpose turns into columns, so no block "
            "type holds the transposed codes",
            "use a float checkpoint, or one that stores the experts per expert"});
        return false;
    }
    const uint64_t experts = static_cast<uint64_t>(shape[0]),
                   rows = static_cast<uint64_t>(shape[1]),
                   columns = static_cast<uint64_t>(shape[2]);
    const uint64_t kept = half ? columns / 2 : columns;
    plan->transpose = {experts, rows,
                       rows,    kept,
                       columns, transform == RowTransform::experts_t_second_half ? kept : 0};
    plan->ne = {static_cast<int64_t>(rows), static_cast<int64_t>(kept),
                static_cast<int64_t>(experts)};
    plan->nbytes = ggml_nbytes(plan->type, plan->ne).value_or(0);
    plan->note += (plan->note.empty() ? "" : "; ") +
                  std::string(down ? "each expert transposed"
                              : transform == RowTransform::experts_t_first_half
                                  ? "each expert's gate columns, transposed"
                                  : "each expert's up columns, transposed");
    return true;
}

}  // namespace rebox::plan_detail
