// config.json of a Hugging Face model directory: architecture and hyper-parameters, read without
// any architecture's rules (arch/read_config.hpp adds them).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rebox {

// config.json "rope_scaling" (or "rope_parameters"): the type and the numbers the llama3 and linear
// schemes read; a field left out is nullopt (the architecture applies llama.cpp's defaults).
struct RopeScalingConfig {
    std::string type;  // "rope_type" (or the older "type"), as written
    std::optional<double> factor;
    std::optional<double> low_freq_factor;
    std::optional<double> high_freq_factor;
    std::optional<uint32_t> original_max_position_embeddings;
    // Phi-3 "longrope" / "su": per rotary-dimension pair factors (numbers as JSON gives them).
    std::optional<std::vector<double>> long_factor;
    std::optional<std::vector<double>> short_factor;
    std::optional<double> partial_rotary_factor;  // inside rope_scaling / rope_parameters
    // "yarn" (gpt-oss): the correction range and the factors the converter passes on when present.
    std::optional<double> beta_fast;
    std::optional<double> beta_slow;
    std::optional<double> extrapolation_factor;
    std::optional<double> attention_factor;  // "attention_factor" or "attn_factor"
};

struct ModelConfig {
    std::string model_type;                  // config.json model_type (or the claiming GGUF arch)
    std::vector<std::string> architectures;  // e.g. ["Qwen3ForCausalLM"]
    uint32_t hidden_size = 0;
    uint32_t num_hidden_layers = 0;
    uint32_t num_attention_heads = 0;
    uint32_t num_key_value_heads = 0;  // defaults to num_attention_heads
    uint32_t head_dim = 0;             // defaults to hidden_size / num_attention_heads
    bool head_dim_given = false;       // config.json has head_dim (not the default)
    // Per layer, whether it applies rope: filled by an architecture's finish_config (smollm3's
    // no_rope_layers), empty otherwise.
    std::vector<bool> rope_layers;
    uint32_t intermediate_size = 0;
    // config.json has intermediate_size (Qwen3.5 MoE's has none: arch/read_config.cpp reads a
    // stand-in no tensor uses, and feed_forward_length is left out).
    bool intermediate_size_given = true;
    uint32_t max_position_embeddings = 0;
    uint32_t vocab_size = 0;
    float rope_theta = 10000.0f;
    float rms_norm_eps = 1e-6f;
    bool tie_word_embeddings = false;
    std::optional<uint32_t> bos_token_id;
    std::optional<uint32_t> eos_token_id;
    std::string name_or_path;  // "_name_or_path" when present
    // Absent, null, or without a type (and "default"): no scaling.
    std::optional<RopeScalingConfig> rope_scaling;
    // Mixture of experts (docs/architectures.md): 0 / nullopt / empty for a dense model.
    uint32_t num_experts = 0;          // "num_experts" (Qwen) or "num_local_experts" (Mixtral)
    uint32_t num_experts_per_tok = 0;  // experts used per token
    std::optional<uint32_t> moe_intermediate_size;            // one expert's feed-forward width
    std::optional<uint32_t> shared_expert_intermediate_size;  // qwen2_moe's shared expert
    std::optional<uint32_t> decoder_sparse_step;              // every k-th layer is MoE (Qwen)
    std::vector<uint32_t> mlp_only_layers;                    // layers that stay dense (Qwen)
    // Top-level fields some architectures read (phi3): null or absent is nullopt.
    std::optional<uint32_t> original_max_position_embeddings;
    std::optional<double> partial_rotary_factor;
    // Written by the architectures that list them (gemma2/gemma3), when present:
    std::optional<float> attn_logit_softcapping;
    std::optional<float> final_logit_softcapping;
    std::optional<uint32_t> sliding_window;
    std::optional<uint32_t> sliding_window_pattern;
    // The local (sliding-window) layers' rope theta: rope_local_base_freq (or local_rope_theta,
    // or rope_parameters.sliding_attention.rope_theta).
    std::optional<float> rope_local_theta;
    // gpt-oss: the clamp of its SwiGLU (llama.cpp hard-codes 7) and each layer's attention kind
    // ("sliding_attention" / "full_attention"); empty when config.json has no layer_types.
    std::optional<double> swiglu_limit;
    std::vector<std::string> layer_types;
    // Encoders (bert): layer_norm_eps (layer_norm_epsilon / norm_epsilon), type_vocab_size, and
    // the classifier's labels: id2label's values in id order (transformers' dummy pair
    // LABEL_0/LABEL_1 included), num_labels their count (num_labels, else 2 as in transformers).
    std::optional<float> layer_norm_eps;
    uint32_t type_vocab_size = 0;
    std::vector<std::string> id2label;
    uint32_t num_labels = 2;
    // RoBERTa-style position ids (xlm-roberta): pad_token_id + 1, the rows of the source position
    // table llama.cpp's converter leaves out (and subtracts from context_length); 0 otherwise.
    uint32_t position_offset = 0;
    // EmbeddingGemma's sentence-transformers Dense modules (2_Dense, 3_Dense): in/out features
    // from each module's config.json, or, for mlx-embeddings' projections in the model's file,
    // from that tensor's shape; not from config.json itself (the plan fills them from the model
    // folder, model/st_dense.hpp, source/mlx_dense.hpp). `origin` names where they come from.
    struct DenseFeatures {
        uint32_t in = 0;
        uint32_t out = 0;
        std::string origin;  // "2_Dense/config.json", "dense.0.weight" (messages)
    };
    std::optional<DenseFeatures> dense_2;
    std::optional<DenseFeatures> dense_3;
    // hidden_activation (modernbert: "gelu" / "silu"), written as {arch}.hidden_activation.
    std::optional<std::string> hidden_activation;
    // Ministral 3 (mistral3 with a ministral3 text model): rope_parameters' mscale_all_dim and
    // llama_4_scaling_beta, filled by the architecture's finish_config; nullopt otherwise.
    std::optional<float> yarn_log_multiplier;
    std::optional<float> attn_temperature_scale;
    // Hybrid models (an architecture's finish_config fills these; empty / 0 / nullopt otherwise):
    // each layer's kind, an index into the bits of TensorSpec::kinds, for the num_hidden_layers
    // layers and the nextn_layers multi-token-prediction layers after them (GGUF blocks
    // num_hidden_layers .. num_hidden_layers + nextn_layers - 1; block_count counts both).
    std::vector<uint8_t> layer_kinds;
    uint32_t nextn_layers = 0;
    // Linear-attention (gated delta-net) layers: config.json linear_conv_kernel_dim,
    // linear_key_head_dim, linear_value_head_dim, linear_num_key_heads, linear_num_value_heads.
    struct LinearAttention {
        uint32_t conv_kernel = 0;
        uint32_t key_head_dim = 0;
        uint32_t value_head_dim = 0;
        uint32_t key_heads = 0;
        uint32_t value_heads = 0;
    };
    std::optional<LinearAttention> linear_attention;
    // Mamba2 layers (nemotron_h): conv_kernel, ssm_state_size, n_groups, mamba_num_heads,
    // mamba_head_dim as config.json gives them.
    struct Mamba2 {
        uint32_t conv_kernel = 0;
        uint32_t state_size = 0;
        uint32_t groups = 0;
        uint32_t heads = 0;
        uint32_t head_dim = 0;
    };
    std::optional<Mamba2> mamba2;
    // Nemotron 3 Super's LatentMoE (nemotron_h_moe): config.json moe_latent_size, the width the
    // routed experts work in between fc1_latent_proj and fc2_latent_proj; nullopt: none (the
    // experts work at hidden_size).
    std::optional<uint32_t> moe_latent_size;
    // config.json has a rope_theta (top level or rope_parameters): TextModel writes rope.freq_base
    // only then (ArchKv::rope_freq_base_given).
    bool rope_theta_given = false;
    uint32_t full_attention_interval = 0;  // every n-th layer is full attention
    // M-RoPE sections (rope_parameters.mrope_section padded to 4); empty: config.json has none.
    std::vector<int32_t> rope_sections;
    // Qwen3-VL: the vision tower layers whose features are added to the first text layers
    // (vision_config.deepstack_visual_indexes' length; {arch}.n_deepstack_layers).
    uint32_t deepstack_layers = 0;
    // DeepSeek-style routing (glm4moe's finish_config fills these; nullopt / false otherwise):
    // n_shared_experts (shared experts, each moe_intermediate_size wide), first_k_dense_replace
    // (the leading dense layers), n_group / topk_group, routed_scaling_factor, norm_topk_prob, as
    // config.json gives them; whether config.json names a score function (TextModel writes the
    // gating function where it finds one) and num_nextn_predict_layers (written even when 0).
    std::optional<uint32_t> n_shared_experts;
    std::optional<uint32_t> leading_dense_blocks;
    std::optional<uint32_t> expert_group_count;
    std::optional<uint32_t> expert_group_used_count;
    std::optional<float> expert_weights_scale;
    std::optional<bool> expert_weights_norm;
    bool score_function_given = false;
    bool nextn_layers_given = false;
    // Full-attention layers with a head shape of their own (gemma4; an architecture's
    // finish_config fills it): their head_dim (global_head_dim) and key/value heads
    // (num_global_key_value_heads; nullopt: num_key_value_heads, and the converter writes one
    // head_count_kv for every layer).
    struct FullAttention {
        uint32_t head_dim = 0;
        std::optional<uint32_t> kv_heads;
    };
    std::optional<FullAttention> full_attention;
    // Multi-head latent attention (deepseek2's finish_config fills it): q_lora_rank (nullopt:
    // config.json has none or null, q_proj instead of q_a_proj / q_b_proj), kv_lora_rank,
    // qk_nope_head_dim, qk_rope_head_dim, v_head_dim; and the score function config.json names
    // (TextModel writes the gating function from it).
    struct Mla {
        std::optional<uint32_t> q_lora_rank;
        uint32_t kv_lora_rank = 0;
        uint32_t nope_head_dim = 0;
        uint32_t rope_head_dim = 0;
        uint32_t v_head_dim = 0;
    };
    std::optional<Mla> mla;
    std::string score_function;
    uint32_t kv_shared_layers = 0;       // num_kv_shared_layers: the last layers have no k/v
    uint32_t per_layer_input_width = 0;  // hidden_size_per_layer_input (0: none)
    // use_double_wide_mlp (gemma4): the KV-shared layers' MLP is 2 * intermediate_size wide.
    bool double_wide_mlp = false;
};

// The architecture-independent reading of config.json. arch/read_config.hpp puts it together
// with each architecture's own rules (read_model_config): merge_text_config, read_config_identity,
// the architecture's defaults and config.json rewrites, read_config_fields, its own fields, then
// the caps (model/config_bounds.hpp). Each throws rebox::Error (input class) naming config.json
// and the field for a missing or ill-typed field.

// A multimodal config's "text_config" object merged over the top level (its fields win), as
// convert_hf_to_gguf's TextModel does.
void merge_text_config(nlohmann::json& root);
// model_type and architectures.
void read_config_identity(const nlohmann::json& root, ModelConfig& config);
// Every other field of ModelConfig that config.json holds under its own name (no architecture's
// aliases, no caps).
void read_config_fields(const nlohmann::json& root, ModelConfig& config);
// A token id field (bos_token_id, pad_token_id): nullopt when absent, null or an array.
std::optional<uint32_t> config_token_id(const nlohmann::json& root, const std::string& field);

}  // namespace rebox
