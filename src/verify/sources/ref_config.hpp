// verify's own reading of config.json: exactly the hyper-parameters verify derives KVs, shapes and
// generated tensors from, parsed apart from src/model/ (no shared defaults or search orders) with
// caps on every count, so a writer's parsing mistake cannot agree with itself and a hostile count
// fails in one line before anything is sized from it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rebox::verify_ref {

// "rope_scaling" (or "rope_parameters"): the type and the numbers the llama3, linear and phi3
// long-rope schemes read; a field left out is nullopt.
struct RefRopeScaling {
    std::string type;  // "rope_type" (or "type"), as written
    std::optional<double> factor;
    std::optional<double> low_freq_factor;
    std::optional<double> high_freq_factor;
    std::optional<uint32_t> original_max_position_embeddings;
    std::optional<std::vector<double>> long_factor;
    std::optional<std::vector<double>> short_factor;
    std::optional<double> partial_rotary_factor;
    std::optional<double> beta_fast;  // yarn (gpt-oss, Olmo 3)
    std::optional<double> extrapolation_factor;
    std::optional<double> attention_factor;  // "attention_factor", else "attn_factor"
    std::optional<double> beta_slow;
};

struct RefConfig {
    std::string model_type;
    uint32_t hidden_size = 0;
    uint32_t num_hidden_layers = 0;
    uint32_t num_attention_heads = 0;
    uint32_t num_key_value_heads = 0;
    uint32_t head_dim = 0;
    bool head_dim_given = false;  // config.json has head_dim
    uint32_t intermediate_size = 0;
    // config.json has intermediate_size (Qwen3.5 MoE's has none: RefArch::
    // intermediate_size_optional, intermediate_size 0, and TextModel writes no
    // feed_forward_length).
    bool intermediate_size_given = true;
    uint32_t max_position_embeddings = 0;
    uint32_t vocab_size = 0;
    float rope_theta = 10000.0f;
    float rms_norm_eps = 1e-6f;
    std::optional<RefRopeScaling> rope_scaling;  // none, or type "default": no scaling
    uint32_t num_experts = 0;                    // 0: dense
    uint32_t num_experts_per_tok = 0;
    std::optional<uint32_t> moe_intermediate_size;
    std::optional<uint32_t> shared_expert_intermediate_size;
    std::optional<uint32_t> original_max_position_embeddings;
    std::optional<double> partial_rotary_factor;
    std::optional<float> attn_logit_softcapping;
    std::optional<float> final_logit_softcapping;
    std::optional<uint32_t> sliding_window;
    std::optional<uint32_t> sliding_window_pattern;
    std::optional<float> rope_local_theta;
    // Encoders (bert): layer_norm_eps (or layer_norm_epsilon / norm_epsilon), type_vocab_size, and
    // the classifier's labels, id2label's values in id order.
    std::optional<float> layer_norm_eps;
    uint32_t type_vocab_size = 0;
    std::vector<std::string> id2label;
    // xlm-roberta: RoBERTa numbers positions from pad_token_id + 1 (transformers' default pad 1),
    // and llama.cpp's converter leaves that many rows out of the position table and
    // context_length. 0 for every other model type.
    uint32_t position_offset = 0;
    // gemma-embedding: the sentence-transformers Dense modules' in/out features, from verify's
    // own reading of modules.json and each module's config.json (ref_dense.hpp); not config.json.
    struct Dense {
        uint32_t in = 0;
        uint32_t out = 0;
    };
    std::optional<Dense> dense_2;
    std::optional<Dense> dense_3;
    // Per layer, whether attention is sliding-window: filled by an architecture's finish_config
    // (olmo2), empty otherwise.
    std::vector<bool> sliding_layers;
    // hidden_activation as config.json gives it (modernbert writes it as {arch}.hidden_activation).
    std::optional<std::string> hidden_activation;
    // mistral3 with a ministral3 text model: the yarn block's mscale_all_dim and
    // llama_4_scaling_beta, filled by its finish_config.
    std::optional<float> yarn_log_multiplier;
    std::optional<float> temperature_scale;
    // Linear-attention (gated delta-net) hybrids, filled by an architecture's finish_config
    // (qwen35): the layer sizes, every full_attention_interval-th layer full attention, the
    // multi-token-prediction layers after the last one, the rope parameters' M-RoPE sections as
    // written (empty: none).
    struct LinearAttention {
        uint32_t conv_kernel = 0, key_head_dim = 0, value_head_dim = 0, key_heads = 0,
                 value_heads = 0;
    };
    std::optional<LinearAttention> linear;
    uint32_t full_attention_interval = 0;
    // Nemotron-H (nemotron_h), filled by its finish_config: the Mamba2 sizes (conv_kernel,
    // ssm_state_size, n_groups, mamba_num_heads, mamba_head_dim) and each layer's kind from
    // hybrid_override_pattern ('M', '*', '-').
    struct Mamba2 {
        uint32_t conv_kernel = 0, state_size = 0, groups = 0, heads = 0, head_dim = 0;
    };
    std::optional<Mamba2> mamba2;
    std::string hybrid_pattern;
    // nemotron_h_moe's LatentMoE width (Nemotron 3 Super's moe_latent_size); nullopt: none.
    std::optional<uint32_t> moe_latent_size;
    bool rope_theta_given = false;
    uint32_t mtp_layers = 0;
    std::vector<int64_t> mrope_section;
    // qwen3vl: vision_config.deepstack_visual_indexes' length (Qwen3VLTextModel's
    // n_deepstack_layers), filled by its finish_config.
    uint32_t deepstack_layers = 0;
    // glm4moe (Glm4MoeModel), filled by its finish_config as config.json gives them (nullopt /
    // false when it has none): n_shared_experts, first_k_dense_replace, n_group, topk_group,
    // routed_scaling_factor, norm_topk_prob; whether it names a score function and
    // num_nextn_predict_layers (mtp_layers holds the count).
    std::optional<uint32_t> shared_experts;
    std::optional<uint32_t> first_k_dense;
    std::optional<uint32_t> n_group;
    std::optional<uint32_t> topk_group;
    std::optional<float> routed_scaling_factor;
    std::optional<bool> norm_topk_prob;
    bool score_function_named = false;
    bool nextn_given = false;
    // gemma4 (Gemma4Model), filled by its finish_config: the full-attention layers' head size and
    // kv heads (nullopt: config.json names none, head_count_kv stays one number), the full
    // layers' rope partial factor, the KV-shared layers and the per-layer input width; the
    // sliding layers are in sliding_layers.
    struct FullAttentionLayers {
        uint32_t head_dim = 0;
        std::optional<uint32_t> kv_heads;
        double partial_rotary_factor = 1.0;
    };
    std::optional<FullAttentionLayers> full_layers;
    uint32_t kv_shared_layers = 0;
    bool double_wide_mlp = false;  // gemma4's use_double_wide_mlp (the KV-shared layers' MLP)
    uint32_t per_layer_input_width = 0;
    // deepseek2 (DeepseekV2Model), filled by its finish_config: the MLA sizes (q_lora_rank nullopt:
    // q_proj) and the score function config.json names (empty: none).
    struct Mla {
        std::optional<uint32_t> q_lora_rank;
        uint32_t kv_lora_rank = 0, nope = 0, rope = 0, v = 0;
    };
    std::optional<Mla> mla;
    std::string score_function;
};

// Caps far above any released model, far below what would exhaust memory or time when verify
// sizes or loops by them.
inline constexpr uint32_t kMaxLayers = 1024;
inline constexpr uint32_t kMaxHeads = 4096;
inline constexpr uint32_t kMaxHeadDim = 8192;
inline constexpr uint32_t kMaxWidth = 1u << 20;  // hidden_size, intermediate sizes
inline constexpr uint32_t kMaxVocab = 1u << 24;
// Experts: as high as rebox convert accepts (a 2-layer checkpoint of 16,666 small experts is the
// 300k-entry scaling benchmark); verify sizes per-expert tables of indices by it, never tensors.
inline constexpr uint32_t kMaxExperts = 65536;
inline constexpr uint32_t kMaxRopeFactors = 1u << 16;  // entries of long_factor / short_factor
inline constexpr uint32_t kMaxPositions = 1u << 30;    // max_position_embeddings and its aliases

// Throws rebox::Error (input) "config.json: KEY: what (expected ...)" for a missing, ill-typed,
// inconsistent or over-cap field. A "text_config" object (multimodal configs) is merged over the
// top level first, its fields winning.
RefConfig read_ref_config(const std::filesystem::path& config_json);
RefConfig parse_ref_config(const std::string& json_text);

// verify's own check of the counts that size something (num_hidden_layers, head_dim, vocab_size,
// num_experts, num_experts_per_tok) against the source tensors' shapes, before anything is sized
// from them: layers at most the tensor count; the others at most the largest dimension (experts:
// or the tensor count, for one tensor per expert), counts up to 4096 always allowed. Throws an
// input-class rebox::Error naming the key.
void check_ref_config_against_shapes(const RefConfig& config,
                                     const std::vector<std::vector<int64_t>>& shapes);

}  // namespace rebox::verify_ref
