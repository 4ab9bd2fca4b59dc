// verify's deepseek2 (DeepseekV3ForCausalLM / DeepseekV2ForCausalLM: DeepSeek-V3 / R1 / V2,
// Kimi-K2; converter class DeepseekV2Model in conversion/deepseek.py, llama.cpp's
// src/models/deepseek2.cpp), written from the converter and the loader. Attention is multi-head
// latent attention: self_attn.q_a_proj [q_lora_rank, hidden], q_a_layernorm [q_lora_rank] and
// q_b_proj [heads * (nope + rope), q_lora_rank] when config.json has a q_lora_rank, else q_proj
// [heads * (nope + rope), hidden]; kv_a_proj_with_mqa [kv_lora_rank + rope, hidden],
// kv_a_layernorm [kv_lora_rank], kv_b_proj [heads * (nope + v), kv_lora_rank], which the GGUF
// holds as two tensors (each head's nope rows transposed: attn_k_b; its v rows: attn_v_b), o_proj
// [hidden, heads * v]. Layers below first_k_dense_replace have the dense mlp, the others the
// router mlp.gate with an optional e_score_correction_bias [experts], the experts and
// mlp.shared_experts.* (moe_intermediate_size * n_shared_experts wide). The layers from
// num_hidden_layers on (MTP) are left out, as skip_mtp drops them. GLM-4.7-Flash: below.
#include <string>

#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/metadata/kv_checker.hpp"

namespace rebox::verify_ref::detail {
namespace deepseek2_ref {

constexpr RefKv kDeepseek2Kvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon, RefKv::vocab_size,
                                   RefKv::rope_scaling_yarn};

// DeepseekV2Model counts its routed experts as n_routed_experts; rms_norm_eps is 1e-6 when absent.
void deepseek2_names(nlohmann::json& root) {
    rename_ref_routed_experts(root);
    if (ref_field(root, "rms_norm_eps") == nullptr) root["rms_norm_eps"] = 1e-6;
}

void deepseek2_config(const nlohmann::json& root, RefConfig& c) {
    constexpr uint32_t kHeadCap = 1u << 16;
    RefConfig::Mla m;
    m.q_lora_rank = ref_count(root, "q_lora_rank", kHeadCap, 1);
    m.kv_lora_rank = ref_count(root, "kv_lora_rank", kHeadCap, 1).value_or(512);
    for (const auto& [key, field] :
         {std::pair{"qk_nope_head_dim", &m.nope}, std::pair{"qk_rope_head_dim", &m.rope},
          std::pair{"v_head_dim", &m.v}}) {
        const auto value = ref_count(root, key, kHeadCap, 1);
        if (!value) throw_input_error("config.json", key, "missing", "the MLA head size");
        *field = *value;
    }
    c.mla = m;
    read_ref_moe_routing(root, c);
    // 0.1 * mscale_all_dim of the rope parameters, in double as Python computes it.
    for (const char* block : {"rope_parameters", "rope_scaling"}) {
        const nlohmann::json* params = ref_field(root, block);
        if (params == nullptr || !params->is_object()) continue;
        if (const nlohmann::json* m_all = ref_field(*params, "mscale_all_dim");
            m_all && m_all->is_number())
            c.yarn_log_multiplier = static_cast<float>(0.1 * m_all->get<double>());
        break;
    }
}

std::optional<std::vector<int64_t>> deepseek2_shape(const RefConfig& c, std::string_view name) {
    using Shape = std::vector<int64_t>;
    uint64_t layer = 0;
    std::string_view rest;
    if (!ref_layer(name, &layer, &rest) || !c.mla) return std::nullopt;
    const RefConfig::Mla& m = *c.mla;
    const int64_t hidden = c.hidden_size, heads = c.num_attention_heads;
    const int64_t q_lora = m.q_lora_rank.value_or(0), kv_lora = m.kv_lora_rank;
    const bool moe = layer >= c.first_k_dense.value_or(0);
    const Shape wrong_kind{0};  // a tensor the layer does not have: a shape no source has
    if (rest == "self_attn.q_a_proj.weight") return q_lora ? Shape{q_lora, hidden} : wrong_kind;
    if (rest == "self_attn.q_a_layernorm.weight") return q_lora ? Shape{q_lora} : wrong_kind;
    if (rest == "self_attn.q_b_proj.weight")
        return q_lora ? Shape{heads * (m.nope + m.rope), q_lora} : wrong_kind;
    if (rest == "self_attn.q_proj.weight")
        return q_lora ? wrong_kind : Shape{heads * (m.nope + m.rope), hidden};
    if (rest == "self_attn.kv_a_proj_with_mqa.weight") return Shape{kv_lora + m.rope, hidden};
    if (rest == "self_attn.kv_a_layernorm.weight") return Shape{kv_lora};
    if (rest == "self_attn.kv_b_proj.weight") return Shape{heads * (m.nope + m.v), kv_lora};
    if (rest == "self_attn.embed_q.weight") return Shape{heads, kv_lora, m.nope};  // mlx-lm
    if (rest == "self_attn.unembed_out.weight") return Shape{heads, m.v, kv_lora};
    if (rest == "self_attn.o_proj.weight") return Shape{hidden, heads * m.v};
    if (auto head = ref_nextn_head_shape(c, rest, layer >= c.num_hidden_layers)) return head;
    return ref_moe_part_shape(c, rest, moe);
}

// GLM-4.7-Flash (Glm4MoeLiteModel): its num_nextn_predict_layers MTP layers are kept.
void glm4_moe_lite_config(const nlohmann::json& root, RefConfig& c) {
    deepseek2_config(root, c);
    c.mtp_layers = ref_count(root, "num_nextn_predict_layers", 64).value_or(0);
}

// DeepseekV2Model (and TextModel under it, num_key_value_heads set to 1): MLA as MQA.
void check_deepseek2_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    const RefConfig::Mla m = config.mla.value_or(RefConfig::Mla{});
    const std::string none = "not in config.json";
    kv.expect_u32(arch + ".attention.head_count_kv", 1);
    kv.expect_optional(arch + ".expert_group_count", config.n_group, none);
    kv.expect_optional(arch + ".expert_group_used_count", config.topk_group, none);
    // gguf-py's ExpertGatingFuncType: SOFTMAX 1, SIGMOID 2, SQRTSOFTPLUS 4.
    const std::string& score = config.score_function;
    if (score.empty())
        kv.expect_absent(arch + ".expert_gating_func", "no score function in config.json");
    else
        kv.expect_u32(arch + ".expert_gating_func", score == "softmax"   ? 1
                                                    : score == "sigmoid" ? 2
                                                                         : 4);
    kv.expect_u32(arch + ".attention.key_length", uint64_t{m.kv_lora_rank} + m.rope);
    kv.expect_u32(arch + ".attention.value_length", m.kv_lora_rank);
    kv.expect_u32(arch + ".leading_dense_block_count", config.first_k_dense.value_or(0));
    kv.expect_optional(arch + ".attention.q_lora_rank", m.q_lora_rank, "q_lora_rank not set");
    kv.expect_u32(arch + ".attention.kv_lora_rank", m.kv_lora_rank);
    kv.expect_u32(arch + ".attention.key_length_mla", uint64_t{m.nope} + m.rope);
    kv.expect_u32(arch + ".attention.value_length_mla", m.v);
    kv.expect_u32(arch + ".expert_shared_count", config.shared_experts.value_or(0));
    if (config.routed_scaling_factor)
        kv.expect_f32(arch + ".expert_weights_scale", *config.routed_scaling_factor);
    else
        kv.expect_absent(arch + ".expert_weights_scale", none);
    if (config.norm_topk_prob.value_or(false))
        kv.expect_bool(arch + ".expert_weights_norm", true);
    else
        kv.expect_absent(arch + ".expert_weights_norm", "norm_topk_prob is not true");
    kv.expect_u32(arch + ".rope.dimension_count", m.rope);
    if (config.yarn_log_multiplier)
        kv.expect_f32(arch + ".rope.scaling.yarn_log_multiplier", *config.yarn_log_multiplier);
    else
        kv.expect_absent(arch + ".rope.scaling.yarn_log_multiplier", "no mscale_all_dim");
    // Glm4MoeLiteModel: the MTP layers it keeps (DeepseekV2Model drops them: none).
    if (config.mtp_layers != 0)
        kv.expect_u32(arch + ".nextn_predict_layers", config.mtp_layers);
    else
        kv.expect_absent(arch + ".nextn_predict_layers", "no MTP layers kept");
}

}  // namespace deepseek2_ref

// GLM-4.7-Flash (Glm4MoeLiteForCausalLM; converter class Glm4MoeLiteModel in conversion/glm.py, a
// DeepseekV2Model): the same layers, and the MTP layers from num_hidden_layers on kept (each a
// MoE layer with the MTP head: eh_proj, enorm, hnorm, embed_tokens, shared_head.*), GLM's
// vocabulary; MLX's pre-split embed_q / unembed_out as for DeepSeek-V3.
const RefArch& ref_glm4_moe_lite() {
    using namespace deepseek2_ref;
    static constexpr std::string_view kModelTypes[] = {"glm4_moe_lite"};
    static const RefArch kArch{.gguf_arch = "deepseek2",
                               .model_types = kModelTypes,
                               .prepare_config = deepseek2_names,
                               .finish_config = glm4_moe_lite_config,
                               .shape = deepseek2_shape,
                               .kvs = kDeepseek2Kvs,
                               .check_kvs = check_deepseek2_kvs,
                               .own_head_count_kv = true,
                               .scale_roles = kScaleAttentionOutput | kScaleOutput,
                               .mtp_in_layers = true,
                               .glm_vocab = true,
                               .mla_kv_b_split = true,
                               // mlx-lm's glm4_moe_lite sanitize splits kv_b_proj as deepseek_v3's
                               .mla_k_b_presplit = "self_attn.embed_q",
                               .mla_v_b_presplit = "self_attn.unembed_out"};
    return kArch;
}

const RefArch& ref_deepseek2() {
    using namespace deepseek2_ref;
    static constexpr std::string_view kModelTypes[] = {"deepseek_v3", "deepseek_v2", "kimi_k2"};
    static const RefArch kArch{.gguf_arch = "deepseek2",
                               .model_types = kModelTypes,
                               .prepare_config = deepseek2_names,
                               .finish_config = deepseek2_config,
                               .shape = deepseek2_shape,
                               .kvs = kDeepseek2Kvs,
                               .check_kvs = check_deepseek2_kvs,
                               .own_head_count_kv = true,
                               .scale_roles = kScaleAttentionOutput | kScaleOutput,
                               .mla_kv_b_split = true,
                               .mla_k_b_presplit = "self_attn.embed_q",
                               .mla_v_b_presplit = "self_attn.unembed_out",
                               .drops_mtp_layers = true};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
