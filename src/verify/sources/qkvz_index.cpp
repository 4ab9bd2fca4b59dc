// verify's reading of Qwen3-Next's in_proj_qkvz (qkvz_index.hpp).
#include "verify/sources/qkvz_index.hpp"

#include "arch/tensor_names.hpp"
#include "rebox/error.hpp"

namespace rebox::verify_ref {
namespace {

constexpr std::string_view kFused = "linear_attn.in_proj_qkvz.weight";
constexpr std::string_view kQkv = "linear_attn.in_proj_qkv.weight";
constexpr std::string_view kZ = "linear_attn.in_proj_z.weight";

}  // namespace

void split_qkvz(SourceIndex& index, const RefConfig& config) {
    const RefConfig::LinearAttention l = config.linear.value_or(RefConfig::LinearAttention{});
    const size_t count = index.entries.size();
    for (size_t i = 0; i < count; ++i) {
        SourceTensor& entry = index.entries[i];
        if (!entry.name.ends_with(kFused)) continue;
        const std::string head = entry.name.substr(0, entry.name.size() - kFused.size());
        const uint64_t k_heads = l.key_heads;
        const uint64_t v_rows = k_heads == 0 || l.value_heads % k_heads != 0
                                    ? 0
                                    : l.value_heads / k_heads * l.value_head_dim;
        const uint64_t group = 2 * uint64_t{l.key_head_dim} + 2 * v_rows;
        if (entry.shape.size() != 2 || v_rows == 0 || l.key_head_dim == 0 ||
            static_cast<uint64_t>(entry.shape[0]) != k_heads * group) {
            entry.problem = error_message(
                entry.file, entry.name,
                "shape " + shape_text(entry.shape) + " is not linear_num_key_heads " +
                    std::to_string(k_heads) + " groups of q, k (" + std::to_string(l.key_head_dim) +
                    " rows each), v and z (" + std::to_string(v_rows) + " rows each)");
            continue;
        }
        index.by_stripped_name.erase(std::string(strip_model_prefix(entry.name)));
        entry.deinterleave_row_values = static_cast<uint64_t>(entry.shape[1]);
        entry.qkvz_heads = k_heads;
        entry.qkvz_key_rows = l.key_head_dim;
        entry.qkvz_value_rows = v_rows;
        SourceTensor z = entry;
        entry.deinterleave = 5;
        entry.shape[0] = static_cast<int64_t>(k_heads * (2 * l.key_head_dim + v_rows));
        entry.element_count = static_cast<uint64_t>(entry.shape[0]) * entry.deinterleave_row_values;
        entry.name = head + std::string(kQkv);
        add_by_stripped_name(index, i);
        z.deinterleave = 6;
        z.shape[0] = static_cast<int64_t>(k_heads * v_rows);
        z.element_count = static_cast<uint64_t>(z.shape[0]) * z.deinterleave_row_values;
        z.name = head + std::string(kZ);
        index.entries.push_back(std::move(z));
        add_by_stripped_name(index, index.entries.size() - 1);
    }
}

std::optional<std::string> qkvz_part_name(std::string_view hf_name, std::string_view gguf_name) {
    if (!hf_name.ends_with(kFused)) return std::nullopt;
    const std::string head(hf_name.substr(0, hf_name.size() - kFused.size()));
    if (gguf_name.ends_with("attn_qkv.weight")) return head + std::string(kQkv);
    if (gguf_name.ends_with("attn_gate.weight")) return head + std::string(kZ);
    return std::nullopt;
}

}  // namespace rebox::verify_ref
