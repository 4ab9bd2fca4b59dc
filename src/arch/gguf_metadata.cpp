// ModelConfig + TokenizerVocab + pooling -> the ordered GGUF KV list llama.cpp reads (docs/gguf.md
// §3.1, §5): integers UINT32, floats FLOAT32, flags BOOL, token types an INT32 array.
#include "arch/gguf_metadata.hpp"

#include <optional>
#include <stdexcept>

#include "arch/architecture.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

// Values are built field by field (the GgufValue representation documented in gguf_value.hpp:
// unsigned as uint64_t, signed as int64_t, floats as double).
GgufValue u32_value(uint32_t v) {
    GgufValue value;
    value.type = GgufType::UINT32;
    value.scalar = uint64_t{v};
    return value;
}

GgufValue f32_value(float v) {
    GgufValue value;
    value.type = GgufType::FLOAT32;
    value.scalar = static_cast<double>(v);
    return value;
}

GgufValue bool_value(bool v) {
    GgufValue value;
    value.type = GgufType::BOOL;
    value.scalar = v;
    return value;
}

GgufValue string_value(std::string v) {
    GgufValue value;
    value.type = GgufType::STRING;
    value.scalar = std::move(v);
    return value;
}

GgufValue string_array_value(const std::vector<std::string>& items) {
    GgufValue value;
    value.type = GgufType::ARRAY;
    value.elem_type = GgufType::STRING;
    value.array.reserve(items.size());
    for (const std::string& item : items) value.array.emplace_back(item);
    return value;
}

GgufValue i32_array_value(const std::vector<int32_t>& items) {
    GgufValue value;
    value.type = GgufType::ARRAY;
    value.elem_type = GgufType::INT32;
    value.array.reserve(items.size());
    for (const int32_t item : items) value.array.emplace_back(int64_t{item});
    return value;
}

// nullopt: the KV is not written for this config (an optional hyper-parameter it does not have).
std::optional<GgufValue> arch_kv_value(arch::ArchKv key, const ModelConfig& config) {
    using arch::ArchKv;
    const auto optional_f32 = [](const std::optional<float>& v) -> std::optional<GgufValue> {
        if (!v) return std::nullopt;
        return f32_value(*v);
    };
    const auto optional_u32 = [](const std::optional<uint32_t>& v) -> std::optional<GgufValue> {
        if (!v) return std::nullopt;
        return u32_value(*v);
    };
    constexpr uint32_t kGatingSigmoid = 2;
    switch (key) {
        case ArchKv::context_length:  // XLMRobertaModel: less the position offset
            return u32_value(config.max_position_embeddings - config.position_offset);
        case ArchKv::embedding_length:
            return u32_value(config.hidden_size);
        case ArchKv::block_count:  // the multi-token-prediction layers count (_QwenMtpMixin)
            return u32_value(config.num_hidden_layers + config.nextn_layers);
        case ArchKv::feed_forward_length:
            return u32_value(config.intermediate_size);
        case ArchKv::feed_forward_length_given:
            if (!config.intermediate_size_given) return std::nullopt;
            return u32_value(config.intermediate_size);
        case ArchKv::head_count:
            return u32_value(config.num_attention_heads);
        case ArchKv::head_count_kv:
            return u32_value(config.num_key_value_heads);
        case ArchKv::rope_freq_base:
            return f32_value(config.rope_theta);
        case ArchKv::rms_epsilon:
            return f32_value(config.rms_norm_eps);
        case ArchKv::key_length:
            return u32_value(config.head_dim);
        case ArchKv::value_length:
            return u32_value(config.head_dim);
        case ArchKv::rope_dimension_count:
            return u32_value(config.head_dim);
        case ArchKv::vocab_size:
            return u32_value(config.vocab_size);
        // TextModel writes each of the three only when config.json has it (Gemma 4's dense
        // configs have none); the plan refuses an MoE family's config without them.
        case ArchKv::expert_count:
            if (config.num_experts == 0) return std::nullopt;
            return u32_value(config.num_experts);
        case ArchKv::expert_used_count:
            if (config.num_experts_per_tok == 0) return std::nullopt;
            return u32_value(config.num_experts_per_tok);
        case ArchKv::expert_feed_forward_length:
            return optional_u32(config.moe_intermediate_size);
        case ArchKv::expert_shared_feed_forward_length:
            return u32_value(config.shared_expert_intermediate_size.value_or(0));
        case ArchKv::expert_feed_forward_length_ffn:
            return u32_value(config.intermediate_size);
        case ArchKv::rope_scaling_original_context_length:
            // The plan refuses a config without it (arch::plan_rope_scaling).
            return u32_value(arch::original_context_length(config).value_or(0));
        case ArchKv::rope_dimension_count_rotary:
            return u32_value(arch::rotary_dimension_count(config));
        case ArchKv::sliding_window_or_zero:
            return u32_value(config.sliding_window.value_or(0));
        case ArchKv::attn_logit_softcapping:
            return optional_f32(config.attn_logit_softcapping);
        case ArchKv::final_logit_softcapping:
            return optional_f32(config.final_logit_softcapping);
        case ArchKv::sliding_window:
            // Gemma3Model: "if hparams.get('sliding_window_pattern') != 1" (every layer global).
            if (!config.sliding_window || config.sliding_window_pattern == 1u) return std::nullopt;
            return u32_value(*config.sliding_window);
        case ArchKv::rope_freq_base_swa:
            return optional_f32(config.rope_local_theta);
        case ArchKv::layer_norm_epsilon:
            return optional_f32(config.layer_norm_eps);
        case ArchKv::causal_false:
            return bool_value(false);
        case ArchKv::sliding_window_required:  // the plan refuses a config without it
            return u32_value(config.sliding_window.value_or(0));
        case ArchKv::dense_2_feat_in:
            if (!config.dense_2) return std::nullopt;
            return u32_value(config.dense_2->in);
        case ArchKv::dense_2_feat_out:
            if (!config.dense_2) return std::nullopt;
            return u32_value(config.dense_2->out);
        case ArchKv::dense_3_feat_in:
            if (!config.dense_3) return std::nullopt;
            return u32_value(config.dense_3->in);
        case ArchKv::dense_3_feat_out:
            if (!config.dense_3) return std::nullopt;
            return u32_value(config.dense_3->out);
        case ArchKv::sliding_window_pattern:
            if (!config.sliding_window_pattern) return std::nullopt;
            return u32_value(*config.sliding_window_pattern);
        case ArchKv::rope_scaling_type_none:
            return string_value("none");
        case ArchKv::hidden_activation:
            if (!config.hidden_activation) return std::nullopt;
            return string_value(*config.hidden_activation);
        case ArchKv::key_length_given:
        case ArchKv::value_length_given:
            if (!config.head_dim_given) return std::nullopt;
            return u32_value(config.head_dim);
        case ArchKv::sliding_window_layers: {
            if (!config.sliding_window) return std::nullopt;
            std::vector<GgufScalar> sliding;
            for (uint32_t i = 0; i < config.num_hidden_layers; ++i)
                sliding.emplace_back(std::in_place_type<bool>,
                                     config.layer_types.empty()
                                         ? (i + 1) % 4 != 0
                                         : i < config.layer_types.size() &&
                                               config.layer_types[i] == "sliding_attention");
            return GgufValue::array_of(GgufType::BOOL, std::move(sliding));
        }
        case ArchKv::rope_scaling_yarn_log_multiplier:
            return optional_f32(config.yarn_log_multiplier);
        case ArchKv::attention_temperature_scale:
            return optional_f32(config.attn_temperature_scale);
        case ArchKv::n_deepstack_layers:
            return u32_value(config.deepstack_layers);
        case ArchKv::nextn_predict_layers:
            if (config.nextn_layers == 0) return std::nullopt;
            return u32_value(config.nextn_layers);
        case ArchKv::ssm_conv_kernel:
        case ArchKv::ssm_state_size:
        case ArchKv::ssm_group_count:
        case ArchKv::ssm_time_step_rank:
        case ArchKv::ssm_inner_size: {
            if (config.mamba2) {  // Mamba2Model / GraniteHybridModel's numbers
                const ModelConfig::Mamba2& m = *config.mamba2;
                if (key == ArchKv::ssm_conv_kernel) return u32_value(m.conv_kernel);
                if (key == ArchKv::ssm_state_size) return u32_value(m.state_size);
                if (key == ArchKv::ssm_group_count) return u32_value(m.groups);
                if (key == ArchKv::ssm_time_step_rank) return u32_value(m.heads);
                return u32_value(m.heads * m.head_dim);
            }
            if (!config.linear_attention) return std::nullopt;
            const ModelConfig::LinearAttention& l = *config.linear_attention;
            if (key == ArchKv::ssm_conv_kernel) return u32_value(l.conv_kernel);
            if (key == ArchKv::ssm_state_size) return u32_value(l.key_head_dim);
            if (key == ArchKv::ssm_group_count) return u32_value(l.key_heads);
            if (key == ArchKv::ssm_time_step_rank) return u32_value(l.value_heads);
            return u32_value(l.value_head_dim * l.value_heads);
        }
        case ArchKv::full_attention_interval:
            return u32_value(config.full_attention_interval);
        case ArchKv::rope_dimension_count_partial: {
            // int(head_dim * partial_rotary_factor), the factor 0.25 when config.json has none.
            const double product =
                double(config.head_dim) * config.partial_rotary_factor.value_or(0.25);
            return u32_value(static_cast<uint32_t>(product));
        }
        case ArchKv::rope_dimension_sections_given:
            if (config.rope_sections.empty()) return std::nullopt;
            return i32_array_value(config.rope_sections);
        case ArchKv::rope_dimension_sections_default:
            if (!config.rope_sections.empty()) return std::nullopt;
            return i32_array_value({11, 11, 10, 0});
        case ArchKv::expert_group_count:
            return optional_u32(config.expert_group_count);
        case ArchKv::expert_group_used_count:
            return optional_u32(config.expert_group_used_count);
        case ArchKv::expert_gating_func_sigmoid_given:
        case ArchKv::expert_gating_func_sigmoid:
            // gguf-py's ExpertGatingFuncType.SIGMOID; at the first place when config.json names a
            // score function, else at the second.
            if (config.score_function_given != (key == ArchKv::expert_gating_func_sigmoid_given))
                return std::nullopt;
            return u32_value(kGatingSigmoid);
        case ArchKv::rope_dimension_count_partial_half: {
            // int(head_dim * partial_rotary_factor), the factor 0.5 when config.json has none.
            const double product =
                double(config.head_dim) * config.partial_rotary_factor.value_or(0.5);
            return u32_value(static_cast<uint32_t>(product));
        }
        case ArchKv::expert_shared_count:
            return optional_u32(config.n_shared_experts);
        case ArchKv::leading_dense_block_count:
            return optional_u32(config.leading_dense_blocks);
        case ArchKv::expert_weights_scale:
            return optional_f32(config.expert_weights_scale);
        case ArchKv::expert_weights_norm:
            if (!config.expert_weights_norm) return std::nullopt;
            return bool_value(*config.expert_weights_norm);
        case ArchKv::nextn_predict_layers_given:
            if (!config.nextn_layers_given) return std::nullopt;
            return u32_value(config.nextn_layers);
        case ArchKv::head_count_kv_layers: {
            // Gemma4Model: the per-layer array only when the full layers' kv heads are given.
            if (!config.full_attention || !config.full_attention->kv_heads)
                return u32_value(config.num_key_value_heads);
            std::vector<int32_t> heads;
            for (const std::string& type : config.layer_types)
                heads.push_back(static_cast<int32_t>(type == "sliding_attention"
                                                         ? config.num_key_value_heads
                                                         : *config.full_attention->kv_heads));
            return i32_array_value(heads);
        }
        case ArchKv::feed_forward_length_double_wide: {
            if (!config.double_wide_mlp) return u32_value(config.intermediate_size);
            // Gemma4Model: il < block_count - num_kv_shared_layers keeps intermediate_size.
            const int64_t first_shared =
                int64_t{config.num_hidden_layers} - config.kv_shared_layers;
            std::vector<int32_t> widths;
            for (int64_t il = 0; il < config.num_hidden_layers; ++il)
                widths.push_back(static_cast<int32_t>(il < first_shared
                                                          ? config.intermediate_size
                                                          : 2 * int64_t{config.intermediate_size}));
            return i32_array_value(widths);
        }
        case ArchKv::key_length_full:
        case ArchKv::value_length_full:
        case ArchKv::rope_dimension_count_full:
            return u32_value(config.full_attention ? config.full_attention->head_dim : 0);
        case ArchKv::key_length_swa:
        case ArchKv::value_length_swa:
        case ArchKv::rope_dimension_count_swa:
            return u32_value(config.head_dim);
        case ArchKv::shared_kv_layers:
            return u32_value(config.kv_shared_layers);
        case ArchKv::embedding_length_per_layer_input:
            return u32_value(config.per_layer_input_width);
        case ArchKv::sliding_window_layer_types: {
            std::vector<GgufScalar> sliding;
            for (const std::string& type : config.layer_types)
                sliding.emplace_back(std::in_place_type<bool>, type == "sliding_attention");
            return GgufValue::array_of(GgufType::BOOL, std::move(sliding));
        }
        case ArchKv::head_count_kv_one:
            return u32_value(1);
        case ArchKv::expert_gating_func_named:
            // gguf-py's ExpertGatingFuncType (SOFTMAX 1, SIGMOID 2, SQRTSOFTPLUS 4); the reading
            // refused any other name.
            if (config.score_function.empty()) return std::nullopt;
            return u32_value(config.score_function == "softmax"   ? 1
                             : config.score_function == "sigmoid" ? 2
                                                                  : 4);
        case ArchKv::context_length_ssm:
            return u32_value(1u << 20);
        case ArchKv::feed_forward_length_mlp_layers:
        case ArchKv::head_count_kv_attention_layers: {
            // One INT32 per layer: the value on the layers of the kind (nemotron_h: 1 the
            // attention layers, 2 the MLP or MoE layers, 3 the folded MTP block, which
            // NemotronHModel registers as both), 0 on the others.
            const bool ffn = key == ArchKv::feed_forward_length_mlp_layers;
            std::vector<int32_t> values;
            for (const uint8_t kind : config.layer_kinds)
                values.push_back(
                    kind != (ffn ? 2 : 1) && kind != 3 ? 0
                    : !ffn ? static_cast<int32_t>(config.num_key_value_heads)
                    : config.num_experts != 0  // nemotron_h_moe: the experts' width
                        ? static_cast<int32_t>(config.moe_intermediate_size.value_or(0))
                        : static_cast<int32_t>(config.intermediate_size));
            return i32_array_value(values);
        }
        case ArchKv::rope_freq_base_given:
            if (!config.rope_theta_given) return std::nullopt;
            return f32_value(config.rope_theta);
        case ArchKv::rope_dimension_count_hidden:
            if (config.num_attention_heads == 0) return std::nullopt;
            return u32_value(config.hidden_size / config.num_attention_heads);
        case ArchKv::rope_scaling_finetuned_false:
            return bool_value(false);
        case ArchKv::moe_latent_size:
            if (!config.moe_latent_size) return std::nullopt;
            return u32_value(*config.moe_latent_size);
        default:
            break;
    }
    if (!config.mla) return std::nullopt;  // the MLA keys below
    const ModelConfig::Mla& m = *config.mla;
    switch (key) {
        case ArchKv::key_length_mla_kv_given:
        case ArchKv::key_length_mla_kv:
            if (config.head_dim_given != (key == ArchKv::key_length_mla_kv_given))
                return std::nullopt;
            return u32_value(m.kv_lora_rank + m.rope_head_dim);
        case ArchKv::value_length_mla_kv_given:
        case ArchKv::value_length_mla_kv:
            if (config.head_dim_given != (key == ArchKv::value_length_mla_kv_given))
                return std::nullopt;
            return u32_value(m.kv_lora_rank);
        case ArchKv::q_lora_rank:
            return optional_u32(m.q_lora_rank);
        case ArchKv::kv_lora_rank:
            return u32_value(m.kv_lora_rank);
        case ArchKv::key_length_mla:
            return u32_value(m.nope_head_dim + m.rope_head_dim);
        case ArchKv::value_length_mla:
            return u32_value(m.v_head_dim);
        case ArchKv::expert_shared_count_or_zero:
            return u32_value(config.n_shared_experts.value_or(0));
        case ArchKv::expert_weights_norm_true:
            if (!config.expert_weights_norm.value_or(false)) return std::nullopt;
            return bool_value(true);
        case ArchKv::rope_dimension_count_mla:
            return u32_value(m.rope_head_dim);
        default:
            break;
    }
    throw std::logic_error("unknown ArchKv");
}

const char* arch_kv_suffix(arch::ArchKv key) {
    using arch::ArchKv;
    switch (key) {
        case ArchKv::context_length:
            return "context_length";
        case ArchKv::embedding_length:
            return "embedding_length";
        case ArchKv::block_count:
            return "block_count";
        case ArchKv::feed_forward_length:
        case ArchKv::feed_forward_length_given:
        case ArchKv::feed_forward_length_double_wide:
            return "feed_forward_length";
        case ArchKv::head_count:
            return "attention.head_count";
        case ArchKv::head_count_kv:
        case ArchKv::head_count_kv_layers:
            return "attention.head_count_kv";
        case ArchKv::rope_freq_base:
            return "rope.freq_base";
        case ArchKv::rms_epsilon:
            return "attention.layer_norm_rms_epsilon";
        case ArchKv::key_length:
        case ArchKv::key_length_given:
        case ArchKv::key_length_full:
            return "attention.key_length";
        case ArchKv::value_length:
        case ArchKv::value_length_given:
        case ArchKv::value_length_full:
            return "attention.value_length";
        case ArchKv::rope_dimension_count:
        case ArchKv::rope_dimension_count_full:
            return "rope.dimension_count";
        case ArchKv::key_length_swa:
            return "attention.key_length_swa";
        case ArchKv::value_length_swa:
            return "attention.value_length_swa";
        case ArchKv::rope_dimension_count_swa:
            return "rope.dimension_count_swa";
        case ArchKv::shared_kv_layers:
            return "attention.shared_kv_layers";
        case ArchKv::embedding_length_per_layer_input:
            return "embedding_length_per_layer_input";
        case ArchKv::vocab_size:
            return "vocab_size";
        case ArchKv::expert_count:
            return "expert_count";
        case ArchKv::expert_used_count:
            return "expert_used_count";
        case ArchKv::expert_feed_forward_length:
        case ArchKv::expert_feed_forward_length_ffn:
            return "expert_feed_forward_length";
        case ArchKv::expert_shared_feed_forward_length:
            return "expert_shared_feed_forward_length";
        case ArchKv::rope_scaling_original_context_length:
            return "rope.scaling.original_context_length";
        case ArchKv::rope_dimension_count_rotary:
            return "rope.dimension_count";
        case ArchKv::attn_logit_softcapping:
            return "attn_logit_softcapping";
        case ArchKv::final_logit_softcapping:
            return "final_logit_softcapping";
        case ArchKv::sliding_window:
        case ArchKv::sliding_window_or_zero:
        case ArchKv::sliding_window_required:
            return "attention.sliding_window";
        case ArchKv::dense_2_feat_in:
            return "dense_2_feat_in";
        case ArchKv::dense_2_feat_out:
            return "dense_2_feat_out";
        case ArchKv::dense_3_feat_in:
            return "dense_3_feat_in";
        case ArchKv::dense_3_feat_out:
            return "dense_3_feat_out";
        case ArchKv::rope_freq_base_swa:
            return "rope.freq_base_swa";
        case ArchKv::layer_norm_epsilon:
            return "attention.layer_norm_epsilon";
        case ArchKv::causal_false:
            return "attention.causal";
        case ArchKv::sliding_window_pattern:
        case ArchKv::sliding_window_layers:
        case ArchKv::sliding_window_layer_types:
            return "attention.sliding_window_pattern";
        case ArchKv::rope_scaling_type_none:
            return "rope.scaling.type";
        case ArchKv::hidden_activation:
            return "hidden_activation";
        case ArchKv::rope_scaling_yarn_log_multiplier:
            return "rope.scaling.yarn_log_multiplier";
        case ArchKv::attention_temperature_scale:
            return "attention.temperature_scale";
        case ArchKv::n_deepstack_layers:
            return "n_deepstack_layers";
        case ArchKv::nextn_predict_layers:
            return "nextn_predict_layers";
        case ArchKv::ssm_conv_kernel:
            return "ssm.conv_kernel";
        case ArchKv::ssm_state_size:
            return "ssm.state_size";
        case ArchKv::ssm_group_count:
            return "ssm.group_count";
        case ArchKv::ssm_time_step_rank:
            return "ssm.time_step_rank";
        case ArchKv::ssm_inner_size:
            return "ssm.inner_size";
        case ArchKv::full_attention_interval:
            return "full_attention_interval";
        case ArchKv::rope_dimension_count_partial:
            return "rope.dimension_count";
        case ArchKv::rope_dimension_sections_given:
        case ArchKv::rope_dimension_sections_default:
            return "rope.dimension_sections";
        case ArchKv::expert_group_count:
            return "expert_group_count";
        case ArchKv::expert_group_used_count:
            return "expert_group_used_count";
        case ArchKv::expert_gating_func_sigmoid_given:
        case ArchKv::expert_gating_func_sigmoid:
            return "expert_gating_func";
        case ArchKv::rope_dimension_count_partial_half:
            return "rope.dimension_count";
        case ArchKv::expert_shared_count:
            return "expert_shared_count";
        case ArchKv::leading_dense_block_count:
            return "leading_dense_block_count";
        case ArchKv::expert_weights_scale:
            return "expert_weights_scale";
        case ArchKv::expert_weights_norm:
            return "expert_weights_norm";
        case ArchKv::nextn_predict_layers_given:
            return "nextn_predict_layers";
        case ArchKv::head_count_kv_one:
            return "attention.head_count_kv";
        case ArchKv::context_length_ssm:
            return "context_length";
        case ArchKv::feed_forward_length_mlp_layers:
            return "feed_forward_length";
        case ArchKv::head_count_kv_attention_layers:
            return "attention.head_count_kv";
        case ArchKv::rope_freq_base_given:
            return "rope.freq_base";
        case ArchKv::rope_dimension_count_hidden:
            return "rope.dimension_count";
        case ArchKv::rope_scaling_finetuned_false:
            return "rope.scaling.finetuned";
        case ArchKv::moe_latent_size:
            return "moe_latent_size";
        case ArchKv::expert_gating_func_named:
            return "expert_gating_func";
        case ArchKv::key_length_mla_kv_given:
        case ArchKv::key_length_mla_kv:
            return "attention.key_length";
        case ArchKv::value_length_mla_kv_given:
        case ArchKv::value_length_mla_kv:
            return "attention.value_length";
        case ArchKv::q_lora_rank:
            return "attention.q_lora_rank";
        case ArchKv::kv_lora_rank:
            return "attention.kv_lora_rank";
        case ArchKv::key_length_mla:
            return "attention.key_length_mla";
        case ArchKv::value_length_mla:
            return "attention.value_length_mla";
        case ArchKv::expert_shared_count_or_zero:
            return "expert_shared_count";
        case ArchKv::expert_weights_norm_true:
            return "expert_weights_norm";
        case ArchKv::rope_dimension_count_mla:
            return "rope.dimension_count";
    }
    throw std::logic_error("unknown ArchKv");
}

}  // namespace

std::vector<GgufKV> build_model_metadata(const ModelMetadataInput& input) {
    if (input.config == nullptr)
        throw std::invalid_argument("build_model_metadata: config is null");
    const ModelConfig& config = *input.config;
    const arch::Architecture* architecture = arch::find_architecture(config.model_type);
    if (architecture == nullptr)
        throw Error(ExitClass::blocker, "config.json", "model_type",
                    "'" + config.model_type + "' is not supported", arch::supported_model_types());
    const std::string arch(architecture->gguf_arch);

    std::vector<GgufKV> kvs;
    auto add = [&kvs](std::string key, GgufValue value) {
        kvs.push_back({std::move(key), std::move(value)});
    };
    auto add_arch = [&](const char* suffix, GgufValue value) {
        add(arch + "." + suffix, std::move(value));
    };

    add("general.architecture", string_value(arch));
    if (!input.card_kvs.empty())
        for (const GgufKV& kv : input.card_kvs) kvs.push_back(kv);
    else if (!input.name.empty())
        add("general.name", string_value(input.name));  // gguf-py skips empty strings
    add("general.file_type", u32_value(static_cast<uint32_t>(input.file_type)));
    add("general.quantization_version", u32_value(2));  // GGML_QNT_VERSION

    for (const arch::ArchKv key : architecture->kvs)
        if (auto value = arch_kv_value(key, config)) add_arch(arch_kv_suffix(key), *value);
    // The plan refuses rope_scaling types it cannot write; "linear" becomes two KVs.
    const arch::RopeScalingPlan rope = arch::plan_rope_scaling(*architecture, config);
    if (!rope.kv_type.empty()) {
        add_arch("rope.scaling.type", string_value(rope.kv_type));
        add_arch("rope.scaling.factor", f32_value(*rope.kv_factor));
    }
    if (rope.yarn_original_context)
        add_arch("rope.scaling.original_context_length", u32_value(*rope.yarn_original_context));
    if (rope.yarn_ext_factor)
        add_arch("rope.scaling.yarn_ext_factor", f32_value(*rope.yarn_ext_factor));
    if (rope.yarn_attn_factor)
        add_arch("rope.scaling.yarn_attn_factor", f32_value(*rope.yarn_attn_factor));
    if (rope.yarn_beta_fast)
        add_arch("rope.scaling.yarn_beta_fast", f32_value(*rope.yarn_beta_fast));
    if (rope.yarn_beta_slow)
        add_arch("rope.scaling.yarn_beta_slow", f32_value(*rope.yarn_beta_slow));
    if (rope.attn_factor) add_arch("rope.scaling.attn_factor", f32_value(*rope.attn_factor));
    for (const auto& [key, values] : input.layer_scalar_kvs) add(key, GgufValue::f32_array(values));
    if (input.pooling) add_arch("pooling_type", u32_value(static_cast<uint32_t>(*input.pooling)));
    // BertModel.__init__: transformers' dummy pair (two labels, LABEL_0 first) is not written.
    const bool dummy_labels = config.id2label.size() == 2 && config.id2label[0] == "LABEL_0";
    if (architecture->encoder && !config.id2label.empty() && (input.reranker || !dummy_labels))
        add_arch("classifier.output_labels", string_array_value(config.id2label));
    // BertModel.set_vocab, first (modernbert's set_vocab is the BPE one: no token types).
    if (architecture->encoder && input.vocab != nullptr && config.type_vocab_size != 0)
        add("tokenizer.ggml.token_type_count", u32_value(config.type_vocab_size));

    if (input.vocab != nullptr) {
        const TokenizerVocab& vocab = *input.vocab;
        // Gemma4Model.set_vocab writes no pre (llama.cpp sets "gemma4" itself), scores and
        // merges both, and add_space_prefix after gguf-py SpecialVocab's KVs.
        const bool gemma4 = vocab.model == "gemma4";
        add("tokenizer.ggml.model", string_value(vocab.model));
        if (!gemma4) add("tokenizer.ggml.pre", string_value(vocab.pre));
        add("tokenizer.ggml.tokens", string_array_value(vocab.tokens));
        if (vocab.model == "llama" || vocab.model == "t5" || gemma4)
            add("tokenizer.ggml.scores", GgufValue::f32_array(vocab.scores));
        add("tokenizer.ggml.token_type", i32_array_value(vocab.token_types));
        if (vocab.model == "gpt2" || gemma4)  // SentencePiece merges by score, WordPiece none
            add("tokenizer.ggml.merges", string_array_value(vocab.merges));
        const std::pair<const char*, const std::optional<uint32_t>*> ids[] = {
            {"tokenizer.ggml.bos_token_id", &vocab.bos_id},
            {"tokenizer.ggml.eos_token_id", &vocab.eos_id},
            {"tokenizer.ggml.eot_token_id", &vocab.eot_id},
            {"tokenizer.ggml.eom_token_id", &vocab.eom_id},
            {"tokenizer.ggml.unknown_token_id", &vocab.unk_id},
            {"tokenizer.ggml.seperator_token_id", &vocab.sep_id},  // gguf-py's spelling
            {"tokenizer.ggml.padding_token_id", &vocab.pad_id},
            {"tokenizer.ggml.mask_token_id", &vocab.mask_id},  // (gguf-py has no cls KV)
        };
        for (const auto& [key, id] : ids)
            if (id->has_value()) add(key, u32_value(**id));
        add("tokenizer.ggml.add_bos_token", bool_value(vocab.add_bos));
        // gguf-py SpecialVocab's order for a Gemma tokenizer: the post-processor's flags (bos, the
        // pair template's sep) ahead of tokenizer_config.json's add_eos_token (checked for gemma4).
        if (vocab.add_sep && gemma4)
            add("tokenizer.ggml.add_sep_token", bool_value(*vocab.add_sep));
        add("tokenizer.ggml.add_eos_token", bool_value(vocab.add_eos));
        if (vocab.add_sep && !gemma4)
            add("tokenizer.ggml.add_sep_token", bool_value(*vocab.add_sep));
        if (vocab.add_space_prefix && !gemma4)
            add("tokenizer.ggml.add_space_prefix", bool_value(*vocab.add_space_prefix));
        if (vocab.remove_extra_whitespaces)
            add("tokenizer.ggml.remove_extra_whitespaces",
                bool_value(*vocab.remove_extra_whitespaces));
        if (!vocab.precompiled_charsmap.empty()) {  // gguf-py writes bytes as a UINT8 array
            std::vector<GgufScalar> bytes;
            bytes.reserve(vocab.precompiled_charsmap.size());
            for (const uint8_t byte : vocab.precompiled_charsmap)
                bytes.emplace_back(uint64_t{byte});
            add("tokenizer.ggml.precompiled_charsmap",
                GgufValue::array_of(GgufType::UINT8, std::move(bytes)));
        }
        if (vocab.chat_template) add("tokenizer.chat_template", string_value(*vocab.chat_template));
        if (vocab.normalizer_lowercase)
            add("tokenizer.ggml.normalizer.lowercase", bool_value(*vocab.normalizer_lowercase));
        if (vocab.normalizer_strip_accents)
            add("tokenizer.ggml.normalizer.strip_accents",
                bool_value(*vocab.normalizer_strip_accents));
        if (vocab.add_space_prefix && gemma4)  // Gemma4Model.set_vocab, after SpecialVocab's
            add("tokenizer.ggml.add_space_prefix", bool_value(*vocab.add_space_prefix));
    }
    return kvs;
}

}  // namespace rebox
