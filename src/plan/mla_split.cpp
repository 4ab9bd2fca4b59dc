// The kv_b_proj split of deepseek2 (mla_split.hpp): the source [heads * (nope + v), kv_lora],
// each head's nope rows then its v rows, as DeepseekV2Model.modify_tensors views and splits it.
#include "plan/mla_split.hpp"

#include <string>

#include "plan/row_moves.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox::plan_detail {

bool attach_mla_split(arch::RowTransform transform, const ModelConfig& config,
                      const SourceTensor& source, const PlanOptions& options, TensorPlan* plan,
                      std::vector<Blocker>* blockers) {
    if (transform != arch::RowTransform::mla_k_b && transform != arch::RowTransform::mla_v_b)
        return true;
    const ModelConfig::Mla m = config.mla.value_or(ModelConfig::Mla{});
    const uint64_t heads = config.num_attention_heads, nope = m.nope_head_dim, v = m.v_head_dim,
                   rank = m.kv_lora_rank;
    const std::vector<int64_t>& shape = source.shape;
    if (shape.size() != 2 || heads == 0 || static_cast<uint64_t>(shape[0]) != heads * (nope + v) ||
        static_cast<uint64_t>(shape[1]) != rank) {
        blockers->push_back(
            Blocker{source.name,
                    "kv_b_proj is split per head into attn_k_b and attn_v_b, but its shape is not "
                    "[num_attention_heads " +
                        std::to_string(heads) + " * (qk_nope_head_dim " + std::to_string(nope) +
                        " + v_head_dim " + std::to_string(v) + "), kv_lora_rank " +
                        std::to_string(rank) + "]",
                    "use the config.json that belongs to these weights"});
        return false;
    }
    if (transform == arch::RowTransform::mla_v_b) {  // each head's v rows, in order
        if (const auto problem = row_move_problem(
                plan->type, rank, source.quant_group() > 0 ? source.quant_group() : 0)) {
            blockers->push_back(Blocker{source.name,
                                        "attn_v_b takes kv_b_proj's v rows, but " + *problem,
                                        "--outtype f32 (every value moves on its own)"});
            return false;
        }
        plan->row_source.clear();
        for (uint64_t h = 0; h < heads; ++h)
            for (uint64_t r = 0; r < v; ++r)
                plan->row_source.push_back(static_cast<uint32_t>(h * (nope + v) + nope + r));
        plan->row_values = rank;
        plan->ne = {static_cast<int64_t>(rank), static_cast<int64_t>(v),
                    static_cast<int64_t>(heads)};
        plan->nbytes = ggml_nbytes(plan->type, plan->ne).value_or(0);
        plan->note += (plan->note.empty() ? "" : "; ") + std::string("kv_b_proj's v rows");
        return true;
    }
    // attn_k_b: each head's nope rows transposed, single values moving.
    const bool one_value_units =
        plan->type == GgmlType::F32 || plan->type == GgmlType::F16 || plan->type == GgmlType::BF16;
    if (!one_value_units) {
        if (!options.allow_lossless_fallback) {
            blockers->push_back(Blocker{
                source.name,
                "attn_k_b is kv_b_proj's qk_nope rows transposed per head; its quantization "
                "groups run along the rows, and no ggml block type holds the transposed codes",
                "--allow-lossless-fallback (attn_k_b written as exact F32)"});
            return false;
        }
        plan->type = GgmlType::F32;
        plan->encoding = Encoding::dequant_f32;
        plan->note = "fallback (a transpose splits the quantization groups) -> F32, exact";
    }
    plan->transpose = {heads, nope + v, nope, rank};
    plan->ne = {static_cast<int64_t>(nope), static_cast<int64_t>(rank),
                static_cast<int64_t>(heads)};
    plan->nbytes = ggml_nbytes(plan->type, plan->ne).value_or(0);
    plan->note += (plan->note.empty() ? "" : "; ") +
                  std::string("kv_b_proj's qk_nope rows, transposed per head");
    return true;
}

}  // namespace rebox::plan_detail
