// deepseek2 (DeepSeek-V3 / R1, DeepSeek-V2, Kimi-K2: DeepseekV3ForCausalLM /
// DeepseekV2ForCausalLM): llama.cpp's deepseek2 loader and graph (src/models/deepseek2.cpp) as the
// converter's DeepseekV2Model -> TextModel chain (conversion/deepseek.py) writes it. Multi-head
// latent attention: q_a_proj / q_a_layernorm / q_b_proj when q_lora_rank is set (else q_proj),
// kv_a_proj_with_mqa -> attn_kv_a_mqa, kv_a_layernorm -> attn_kv_a_norm, and kv_b_proj split
// into attn_k_b (each head's qk_nope rows, transposed) and attn_v_b (each head's v rows), as
// DeepseekV2Model.modify_tensors splits it (RowTransform::mla_k_b / mla_v_b); head_count_kv 1
// (MLA as MQA). The first first_k_dense_replace layers have a dense feed-forward, the others a
// router (softmax or sigmoid gating from scoring_func) with its optional score-correction bias
// (e_score_correction_bias -> exp_probs_b.bias), n_routed_experts experts stacked into 3-D
// tensors and n_shared_experts shared experts fused into one. The MTP layers after
// num_hidden_layers are dropped (skip_mtp). YaRN with yarn_log_multiplier = 0.1 * mscale_all_dim.
// GLM-4.7-Flash is the same record with its MTP layers kept and GLM's vocabulary (below).
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace deepseek2_record {

using enum Presence;

// The layer kinds (ModelConfig::layer_kinds values): dense or MoE feed-forward, times q_a/q_b
// (q_lora_rank set) or one q_proj; and the MTP layers GLM-4.7-Flash keeps (MoE with the MTP
// head).
constexpr uint8_t kDenseLora = 0, kMoeLora = 1, kDenseQ = 2, kMoeQ = 3, kMtpLora = 4, kMtpQ = 5;
constexpr uint8_t kMtpBits = (1u << kMtpLora) | (1u << kMtpQ),
                  kLoraBits = (1u << kDenseLora) | (1u << kMoeLora) | (1u << kMtpLora),
                  kQBits = (1u << kDenseQ) | (1u << kMoeQ) | (1u << kMtpQ),
                  kDenseBits = (1u << kDenseLora) | (1u << kDenseQ),
                  kMoeBits = (1u << kMoeLora) | (1u << kMoeQ) | kMtpBits;

constexpr std::string_view kModelTypes[] = {"deepseek_v3", "deepseek_v2", "kimi_k2"};

constexpr TensorSpec matrix(std::string_view hf, std::string_view gguf, Dim columns, Dim rows,
                            uint8_t kinds = 0) {
    TensorSpec spec{hf, gguf, required, absent, 2, {columns, rows}};
    spec.kinds = kinds;
    return spec;
}
constexpr TensorSpec vector_row(std::string_view hf, std::string_view gguf, Dim width,
                                uint8_t kinds = 0) {
    TensorSpec spec{hf, gguf, required, absent, 1, {width}};
    spec.kinds = kinds;
    return spec;
}
// One part of kv_b_proj: [ne0, ne1, heads].
constexpr TensorSpec kv_b_part(std::string_view gguf, Dim ne0, Dim ne1, RowTransform part) {
    return {"self_attn.kv_b_proj", gguf, required, absent, 3, {ne0, ne1, Dim::heads}, part};
}
// mlx-lm's deepseek_v3 split of kv_b_proj (its sanitize): embed_q [heads, kv_lora, nope] and
// unembed_out [heads, v, kv_lora] are attn_k_b and attn_v_b in llama.cpp's layout, read as they
// are (optional: kv_b_proj's rows are the required ones).
constexpr TensorSpec presplit(std::string_view hf, std::string_view gguf, Dim ne0, Dim ne1) {
    return {hf, gguf, optional, absent, 3, {ne0, ne1, Dim::heads}};
}

constexpr TensorSpec kFirst[] = {kTokenEmbd};
constexpr auto kLayer = join(
    std::array{
        kAttnNorm,
        matrix("self_attn.q_a_proj", "attn_q_a", Dim::hidden, Dim::q_lora, kLoraBits),
        vector_row("self_attn.q_a_layernorm", "attn_q_a_norm", Dim::q_lora, kLoraBits),
        matrix("self_attn.q_b_proj", "attn_q_b", Dim::q_lora, Dim::q_mla_width, kLoraBits),
        matrix("self_attn.q_proj", "attn_q", Dim::hidden, Dim::q_mla_width, kQBits),
        matrix("self_attn.kv_a_proj_with_mqa", "attn_kv_a_mqa", Dim::hidden, Dim::kv_a_width),
        vector_row("self_attn.kv_a_layernorm", "attn_kv_a_norm", Dim::kv_lora),
        kv_b_part("attn_k_b", Dim::mla_nope, Dim::kv_lora, RowTransform::mla_k_b),
        kv_b_part("attn_v_b", Dim::kv_lora, Dim::mla_v, RowTransform::mla_v_b),
        presplit("self_attn.embed_q", "attn_k_b", Dim::mla_nope, Dim::kv_lora),
        presplit("self_attn.unembed_out", "attn_v_b", Dim::kv_lora, Dim::mla_v),
        matrix("self_attn.o_proj", "attn_output", Dim::o_mla_width, Dim::hidden),
        kFfnNorm,
        // The leading dense layers.
        matrix("mlp.gate_proj", "ffn_gate", Dim::hidden, Dim::ffn, kDenseBits),
        matrix("mlp.down_proj", "ffn_down", Dim::ffn, Dim::hidden, kDenseBits),
        matrix("mlp.up_proj", "ffn_up", Dim::hidden, Dim::ffn, kDenseBits),
    },
    deepseek_moe_ffn(kMoeBits, Presence::optional),  // DeepSeek-V2 has no score-correction bias
    nextn_head(kMtpBits));                           // GLM-4.7-Flash's MTP layers only
// The loader falls back to token_embd when output.weight is absent.
constexpr TensorSpec kLast[] = {kOutputNorm, output_row(optional)};

// TextModel.set_gguf_parameters with num_key_value_heads set to 1 (its key/value lengths only
// where config.json has a head_dim, rewritten in place later), then DeepseekV2Model's own, in its
// order (expert_count again keeps its first place; the YaRN type, factor, context and betas are
// the rope scaling plan's, Architecture::rope_yarn).
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,
    ArchKv::context_length,
    ArchKv::embedding_length,
    ArchKv::feed_forward_length,
    ArchKv::head_count,
    ArchKv::head_count_kv_one,
    ArchKv::rope_freq_base,
    ArchKv::rms_epsilon,
    ArchKv::expert_count,
    ArchKv::expert_used_count,
    ArchKv::expert_group_count,
    ArchKv::expert_group_used_count,
    ArchKv::expert_gating_func_named,
    ArchKv::key_length_mla_kv_given,
    ArchKv::value_length_mla_kv_given,
    ArchKv::leading_dense_block_count,
    ArchKv::vocab_size,
    ArchKv::q_lora_rank,
    ArchKv::kv_lora_rank,
    ArchKv::key_length_mla_kv,
    ArchKv::value_length_mla_kv,
    ArchKv::key_length_mla,
    ArchKv::value_length_mla,
    ArchKv::expert_feed_forward_length,
    ArchKv::expert_shared_count_or_zero,
    ArchKv::expert_weights_scale,
    ArchKv::expert_weights_norm_true,
    ArchKv::rope_dimension_count_mla,
    ArchKv::rope_scaling_yarn_log_multiplier,
};

// DeepseekV2Model.set_gguf_parameters: rms_norm_eps 1e-6 when config.json has none.
constexpr ConfigDefault kDefaults[] = {{"rms_norm_eps", "1e-06"}};

uint32_t required_number(const nlohmann::json& root, const char* name, uint32_t cap) {
    const auto value = config_count(root, name, 1, cap);
    if (!value)
        throw_input_error("config.json", name, "missing",
                          "the MLA head size DeepseekV2Model reads");
    return *value;
}

// DeepseekV2Model stacks n_routed_experts experts and writes that count; the common reading
// takes it from num_experts.
void prepare_deepseek2(nlohmann::json& root) {
    take_routed_experts(root, "the routed expert count (rebox writes DeepSeek MoE models)");
}

// The loader's rule: layers below leading_dense_block_count are dense, the rest MoE; each with
// q_a/q_b when q_lora_rank is set, else q. Then the nextn_layers MTP layers (none for the
// converter's DeepseekV2Model, which drops them; GLM-4.7-Flash's, and a GGUF's for rebox check).
void deepseek2_layer_kinds(ModelConfig& config) {
    config.layer_kinds.clear();
    const uint32_t dense = config.leading_dense_blocks.value_or(0);
    const bool lora = config.mla && config.mla->q_lora_rank;
    for (uint32_t i = 0; i < config.num_hidden_layers; ++i)
        config.layer_kinds.push_back(i < dense ? (lora ? kDenseLora : kDenseQ)
                                               : (lora ? kMoeLora : kMoeQ));
    config.layer_kinds.resize(config.num_hidden_layers + config.nextn_layers,
                              lora ? kMtpLora : kMtpQ);
}

// The MLA sizes, the routing fields and YaRN's log multiplier, as the converter reads them.
void read_deepseek2(const nlohmann::json& root, ModelConfig& config) {
    constexpr uint32_t kCap = 1u << 16;
    ModelConfig::Mla mla;
    mla.q_lora_rank = config_count(root, "q_lora_rank", 1, kCap);
    mla.kv_lora_rank = config_count(root, "kv_lora_rank", 1, kCap).value_or(512);
    mla.nope_head_dim = required_number(root, "qk_nope_head_dim", kCap);
    mla.rope_head_dim = required_number(root, "qk_rope_head_dim", kCap);
    mla.v_head_dim = required_number(root, "v_head_dim", kCap);
    config.mla = mla;
    config.score_function = read_moe_routing(root, config);
    // Default: 0 leading dense layers in a MoE model (DeepseekV2Model writes it always).
    config.leading_dense_blocks = config.leading_dense_blocks.value_or(0);
    // rope.scaling.yarn_log_multiplier = 0.1 * mscale_all_dim (Python's double product, stored
    // as FLOAT32), from the rope parameters, whatever their type.
    config.yarn_log_multiplier.reset();
    for (const char* block : {"rope_parameters", "rope_scaling"}) {
        const nlohmann::json* params = config_field(root, block);
        if (params == nullptr || !params->is_object()) continue;
        if (const nlohmann::json* m = config_field(*params, "mscale_all_dim")) {
            if (!m->is_number())
                throw_input_error("config.json", std::string(block) + ".mscale_all_dim",
                                  "is " + m->dump(), "a number");
            config.yarn_log_multiplier = static_cast<float>(0.1 * m->get<double>());
        }
        break;
    }
    if (config.num_hidden_layers > kCap) return;  // refused by the caps after this hook
    deepseek2_layer_kinds(config);
}

// What llama.cpp's deepseek2 loader cannot take, or the tables do not describe.
void deepseek2_checks(const Architecture&, const ModelConfig& config,
                      std::vector<std::string>& problems) {
    if (config.num_key_value_heads != config.num_attention_heads)
        problems.push_back("num_key_value_heads " + std::to_string(config.num_key_value_heads) +
                           " differs from num_attention_heads " +
                           std::to_string(config.num_attention_heads) +
                           ": kv_b_proj is split per head, and llama.cpp's deepseek2 loader "
                           "sizes attn_k_b / attn_v_b by num_attention_heads");
    if (config.leading_dense_blocks.value_or(0) > config.num_hidden_layers)
        problems.push_back("first_k_dense_replace " + std::to_string(*config.leading_dense_blocks) +
                           " is more than num_hidden_layers " +
                           std::to_string(config.num_hidden_layers));
}

constexpr Architecture kDeepseek2 = [] {
    Architecture a{"deepseek2", kModelTypes, kFirst, kLayer, kLast, kKvs, {}};
    a.config_defaults = kDefaults;
    a.prepare_config = prepare_deepseek2;
    a.finish_config = read_deepseek2;
    a.set_layer_kinds = deepseek2_layer_kinds;
    a.config_checks = deepseek2_checks;
    a.rope_yarn = true;
    a.drops_mtp_layers = true;
    // Kimi-K2 / K2-Thinking / K2.5 ship tiktoken.model (DeepseekV2Model.set_vocab's kimi-k2
    // branch).
    a.tiktoken_vocab = true;
    // deepseek2.cpp applies the .scale of the attention output (build_attn's wo_s) and the
    // output only: attn_q (no q_lora_rank), attn_q_a / attn_q_b, attn_kv_a_mqa, attn_k_b /
    // attn_v_b, the feed-forward and the experts are plain products.
    a.nvfp4_scales = {.output = true, .attention_output_only = true};
    return a;
}();

// GLM-4.7-Flash (Glm4MoeLiteForCausalLM) is Glm4MoeLiteModel (conversion/glm.py), a
// DeepseekV2Model that keeps the num_nextn_predict_layers MTP layers (layers.N from
// num_hidden_layers on: a whole MoE layer plus the MTP head, written as blk.N.nextn.*; counted in
// block_count, and nextn_predict_layers written after DeepseekV2Model's KVs when there are any)
// and reads GLM's vocabulary (_set_vocab_glm).
constexpr std::string_view kLiteModelTypes[] = {"glm4_moe_lite"};
constexpr auto kLiteKvs = join(std::to_array(kKvs), std::array{ArchKv::nextn_predict_layers});

// The MTP layer count first: read_deepseek2 sets the layer kinds.
void read_glm4_moe_lite(const nlohmann::json& root, ModelConfig& config) {
    config.nextn_layers = config_count(root, "num_nextn_predict_layers", 0, 64).value_or(0);
    read_deepseek2(root, config);
}

constexpr Architecture kGlm4MoeLite = [] {
    Architecture a = kDeepseek2;
    a.model_types = kLiteModelTypes;
    a.kvs = kLiteKvs;
    a.finish_config = read_glm4_moe_lite;
    a.finish_vocab = glm_vocab;
    a.tiktoken_vocab = false;  // _set_vocab_glm reads tokenizer.json only
    a.drops_mtp_layers = false;
    a.mtp_probe = "nextn.eh_proj";  // the loader's trunk-only probe
    a.supports_no_mtp = true;       // Glm4MoeLiteModel (DeepseekV2Model does not take it)
    return a;
}();

}  // namespace deepseek2_record

const Architecture& deepseek2_architecture() { return deepseek2_record::kDeepseek2; }
const Architecture& glm4_moe_lite_architecture() { return deepseek2_record::kGlm4MoeLite; }

}  // namespace rebox::arch::detail
