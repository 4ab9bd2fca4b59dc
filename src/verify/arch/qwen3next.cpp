// verify's qwen3next (Qwen3NextForCausalLM; converter class Qwen3NextModel, llama.cpp's
// src/models/qwen3next.cpp), written from the converter and the loader: qwen35moe's layers (the
// shared parts: ref_qwen35_parts.hpp) with Qwen3NextModel's own linear-attention input: the fused
// in_proj_qkvz [key heads * (2 * key dim + 2 * r * value dim), hidden] read as its two parts
// (sources/qkvz_index.hpp), in_proj_ba [2 * value heads, hidden] as it is, and no value-head
// reorder. config.json has no mtp_num_hidden_layers: the checkpoint's mtp.layers count.
#include <string>

#include "verify/arch/ref_arch.hpp"
#include "verify/arch/ref_qwen35_parts.hpp"

namespace rebox::verify_ref::detail {
namespace qwen3next_ref {

constexpr RefKv kKvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon, RefKv::head_dim_lengths_given};

std::optional<std::vector<int64_t>> qwen3next_shape(const RefConfig& c, std::string_view name) {
    using Shape = std::vector<int64_t>;
    const RefConfig::LinearAttention l = c.linear.value_or(RefConfig::LinearAttention{});
    if (name.ends_with(".linear_attn.in_proj_ba.weight"))
        return Shape{2 * int64_t{l.value_heads}, int64_t{c.hidden_size}};
    if (name.ends_with(".linear_attn.in_proj_a.weight") ||
        name.ends_with(".linear_attn.in_proj_b.weight"))
        return Shape{0};  // Qwen3.5's split beta / alpha: a shape no source has here
    return qwen35_ref::qwen35moe_shape(c, name);
}

}  // namespace qwen3next_ref

const RefArch& ref_qwen3next() {
    using namespace qwen3next_ref;
    static constexpr std::string_view kModelTypes[] = {"qwen3_next"};
    static const RefArch kArch{.gguf_arch = "qwen3next",
                               .model_types = kModelTypes,
                               .prepare_config = qwen35_ref::qwen35_defaults,
                               .finish_config = qwen35_ref::qwen35_config,
                               .shape = qwen3next_shape,
                               .kvs = kKvs,
                               .check_kvs = qwen35_ref::check_qwen3next_kvs,
                               .norm_plus_one = true,
                               .mlx_norms_shifted = true,
                               .linear_attention = true,
                               .qkvz_split = true,
                               .scale_roles = kScaleAttention | kScaleExperts | kScaleOutput |
                                              kScaleSharedExperts | kScaleNextn,
                               .mtp_prefix = "mtp.",
                               .fused_experts = true};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
