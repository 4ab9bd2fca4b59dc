// verify's glm4moe (Glm4MoeForCausalLM: GLM-4.5 / 4.5-Air / 4.6 / 4.7; converter class
// Glm4MoeModel in conversion/glm.py, llama.cpp's src/models/glm4-moe.cpp), written from the
// converter and the loader: layer i below first_k_dense_replace has the dense mlp.{gate,up,down}
// _proj; the others, and the num_nextn_predict_layers MTP layers after num_hidden_layers (named
// "layers.N" like the rest), the router mlp.gate [experts, hidden] with its
// e_score_correction_bias [experts], the experts (the decoder table's mlp.experts.{e}.* /
// switch_mlp.*) and mlp.shared_experts.* (moe_intermediate_size * n_shared_experts wide). Only
// the MTP layers hold eh_proj [hidden, 2 * hidden], enorm / hnorm / shared_head.norm [hidden] and
// embed_tokens / shared_head.head [vocab, hidden]. No transforms (NEOX rope, nothing permuted).
#include <string>

#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/metadata/kv_checker.hpp"

namespace rebox::verify_ref::detail {
namespace glm4moe_ref {

constexpr RefKv kGlm4MoeKvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon,
                                 RefKv::head_dim_lengths_given};

// Glm4MoeModel counts its routed experts as n_routed_experts.
void glm4moe_names(nlohmann::json& root) { rename_ref_routed_experts(root); }

void glm4moe_config(const nlohmann::json& root, RefConfig& c) {
    read_ref_moe_routing(root, c);
    const auto nextn = ref_count(root, "num_nextn_predict_layers", 64);
    c.mtp_layers = nextn.value_or(0);
    c.nextn_given = nextn.has_value();
    // The rope parameters' own partial factor wins over the top-level one (TextModel).
    for (const char* block : {"rope_parameters", "rope_scaling"}) {
        const nlohmann::json* params = ref_field(root, block);
        if (params == nullptr || !params->is_object()) continue;
        if (const nlohmann::json* f = ref_field(*params, "partial_rotary_factor");
            f && f->is_number())
            c.partial_rotary_factor = f->get<double>();
        break;
    }
}

std::optional<std::vector<int64_t>> glm4moe_shape(const RefConfig& c, std::string_view name) {
    uint64_t layer = 0;
    std::string_view rest;
    if (!ref_layer(name, &layer, &rest)) return std::nullopt;
    const bool mtp = layer >= c.num_hidden_layers;
    const bool moe = mtp || layer >= c.first_k_dense.value_or(0);
    if (auto head = ref_nextn_head_shape(c, rest, mtp)) return head;
    return ref_moe_part_shape(c, rest, moe);
}

// glm4moe: TextModel's group counts and gating function, then Glm4MoeModel's own KVs; each one
// config.json has a field for is written, the gating function (SIGMOID) always.
void check_glm4moe_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    const std::string none = "not in config.json";
    kv.expect_optional(arch + ".expert_group_count", config.n_group, none);
    kv.expect_optional(arch + ".expert_group_used_count", config.topk_group, none);
    kv.expect_u32(arch + ".expert_gating_func", 2);  // gguf-py's ExpertGatingFuncType.SIGMOID
    // int(rope_dim * factor) in Python: the product of two doubles, truncated.
    kv.expect_u32(arch + ".rope.dimension_count",
                  static_cast<uint64_t>(double(config.head_dim) *
                                        config.partial_rotary_factor.value_or(0.5)));
    kv.expect_optional(arch + ".expert_shared_count", config.shared_experts, none);
    kv.expect_optional(arch + ".leading_dense_block_count", config.first_k_dense, none);
    if (config.routed_scaling_factor)
        kv.expect_f32(arch + ".expert_weights_scale", *config.routed_scaling_factor);
    else
        kv.expect_absent(arch + ".expert_weights_scale", none);
    kv.expect_optional(arch + ".expert_weights_norm", config.norm_topk_prob, none);
    if (config.nextn_given)
        kv.expect_u32(arch + ".nextn_predict_layers", config.mtp_layers);
    else
        kv.expect_absent(arch + ".nextn_predict_layers", "no num_nextn_predict_layers");
}

}  // namespace glm4moe_ref

const RefArch& ref_glm4moe() {
    using namespace glm4moe_ref;
    static constexpr std::string_view kModelTypes[] = {"glm4_moe"};
    static const RefArch kArch{.gguf_arch = "glm4moe",
                               .model_types = kModelTypes,
                               .prepare_config = glm4moe_names,
                               .finish_config = glm4moe_config,
                               .shape = glm4moe_shape,
                               .kvs = kGlm4MoeKvs,
                               .check_kvs = check_glm4moe_kvs,
                               .scale_roles = kScaleAttention | kScaleOutput,
                               .mtp_in_layers = true,
                               .glm_vocab = true};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
