// Qwen3-Next's in_proj_qkvz split (qkvz_split.hpp): the source [k_heads * (2 * head_k_dim + 2 * r *
// head_v_dim), hidden], r = value heads / key heads, as Qwen3NextModel.modify_tensors views it
// per key head and splits it into q, k, v and z.
#include "plan/qkvz_split.hpp"

#include <string>

#include "arch/transforms.hpp"
#include "format/shape_text.hpp"
#include "plan/row_moves.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox::plan_detail {

bool attach_qkvz_split(arch::RowTransform transform, const ModelConfig& config,
                       const SourceTensor& source, uint64_t source_group, TensorPlan* plan,
                       std::vector<Blocker>* blockers) {
    if (transform != arch::RowTransform::qkvz_qkv && transform != arch::RowTransform::qkvz_z)
        return true;
    const ModelConfig::LinearAttention l =
        config.linear_attention.value_or(ModelConfig::LinearAttention{});
    const uint64_t k_heads = l.key_heads;
    const uint64_t v_rows = k_heads == 0 ? 0 : uint64_t{l.value_heads} / k_heads * l.value_head_dim;
    const uint64_t group = 2 * uint64_t{l.key_head_dim} + 2 * v_rows;
    const std::vector<int64_t>& shape = source.shape;
    const bool z = transform == arch::RowTransform::qkvz_z;
    const std::string part = z ? "attn_gate (z)" : "attn_qkv (q, k, v)";
    if (shape.size() != 2 || k_heads == 0 || l.value_heads % k_heads != 0 ||
        static_cast<uint64_t>(shape[0]) != k_heads * group) {
        blockers->push_back(Blocker{
            source.name,
            "in_proj_qkvz is split per key head into attn_qkv and attn_gate, but its shape " +
                rebox::detail::shape_text(shape) + " is not [linear_num_key_heads " +
                std::to_string(k_heads) + " * (2 * linear_key_head_dim " +
                std::to_string(l.key_head_dim) + " + 2 * linear_num_value_heads " +
                std::to_string(l.value_heads) + " / linear_num_key_heads * linear_value_head_dim " +
                std::to_string(l.value_head_dim) + "), hidden]",
            "use the config.json that belongs to these weights"});
        return false;
    }
    const uint64_t row_values = static_cast<uint64_t>(shape[1]);
    if (const auto problem = row_move_problem(plan->type, row_values, source_group)) {
        blockers->push_back(Blocker{source.name,
                                    part + " takes in_proj_qkvz's rows, but " + *problem,
                                    "--outtype f32 (every value moves on its own)"});
        return false;
    }
    const auto rows = arch::qkvz_source_rows(l.key_heads, l.key_head_dim, v_rows, z);
    if (!rows) {
        blockers->push_back(Blocker{source.name, "in_proj_qkvz has too many rows to split",
                                    "use the config.json that belongs to these weights"});
        return false;
    }
    plan->row_source = *rows;
    plan->row_values = row_values;
    plan->ne = {static_cast<int64_t>(row_values), static_cast<int64_t>(rows->size())};
    plan->nbytes = ggml_nbytes(plan->type, plan->ne).value_or(0);
    plan->note +=
        (plan->note.empty() ? "" : "; ") + std::string("in_proj_qkvz's ") + part + " rows";
    return true;
}

}  // namespace rebox::plan_detail
