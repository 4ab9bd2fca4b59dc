// The architecture registry: for every GGUF architecture rebox writes, the config model_types it
// accepts, the HF -> GGUF tensor table (which tensors are required or optional, their ne from
// config.json, the output order), the {arch}.* KVs it writes and the exact whole-row transforms
// some tensors need (docs/architectures.md). One file per architecture in src/arch/ fills one
// Architecture; everything else asks this header instead of testing architecture names.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/model_config.hpp"

namespace rebox {
struct TokenizerVocab;
}

namespace rebox::arch {

// A length a tensor's ne is made of, resolved from config.json.
enum class Dim : uint8_t {
    hidden,    // hidden_size
    vocab,     // vocab_size
    ffn,       // intermediate_size
    q_width,   // num_attention_heads * head_dim
    kv_width,  // num_key_value_heads * head_dim
    head_dim,  // head_dim
    // Mixture of experts:
    experts,     // num_experts (num_local_experts)
    expert_ffn,  // moe_intermediate_size, else intermediate_size (Mixtral)
    shared_ffn,  // shared_expert_intermediate_size (qwen2_moe)
    one,         // 1 (a [1, hidden] gate: ne {hidden, 1})
    // Fused tensors (phi3): q, k and v stacked, gate and up stacked.
    qkv_width,  // num_attention_heads * head_dim + 2 * num_key_value_heads * head_dim
    ffn_x2,     // 2 * intermediate_size
    // Encoders (bert):
    // max_position_embeddings less the position offset (the rows of the GGUF position table;
    // xlm-roberta: the source table has max_position_embeddings rows, the first
    // ModelConfig::position_offset of which are left out).
    positions,
    token_types,  // type_vocab_size (the rows of the token-type table)
    labels,       // the classifier's outputs: id2label's size, else num_labels, else 1
    heads,        // num_attention_heads (gpt-oss attn_sinks: one value per head)
    // EmbeddingGemma's sentence-transformers Dense projections (ModelConfig::dense_2 / dense_3):
    dense_2_out,  // 2_Dense out_features (dense_2's rows)
    dense_3_in,   // 3_Dense in_features (dense_3's row length)
    // Gated attention (qwen35): q_proj holds the query and its gate per head.
    q_width_x2,  // 2 * num_attention_heads * head_dim
    hidden_x2,   // 2 * hidden_size (the MTP eh_proj's row length)
    // Linear-attention layers (ModelConfig::linear_attention):
    lin_qkv_width,   // 2 * key heads * key head dim + value heads * value head dim
    lin_v_width,     // value heads * value head dim
    lin_v_heads,     // value heads
    lin_v_head_dim,  // value head dim
    lin_conv_width,  // conv kernel (conv1d's taps per channel)
    lin_v_heads_x2,  // 2 * value heads (Qwen3-Next's in_proj_ba: beta and alpha per value head)
    // DeepSeek-style shared experts (glm4moe): moe_intermediate_size * n_shared_experts.
    shared_experts_ffn,
    // Full-attention layers with their own head shape (ModelConfig::full_attention, gemma4):
    head_dim_full,  // the full layers' head_dim (global_head_dim)
    q_width_full,   // num_attention_heads * head_dim_full
    kv_width_full,  // the full layers' key/value heads * head_dim_full
    // Fused experts kept fused (gemma4's experts.gate_up_proj -> ffn_gate_up_exps):
    expert_ffn_x2,  // 2 * moe_intermediate_size (each expert's gate rows, then its up rows)
    // Multi-head latent attention (ModelConfig::mla, deepseek2):
    q_lora,       // q_lora_rank
    kv_lora,      // kv_lora_rank
    kv_a_width,   // kv_lora_rank + qk_rope_head_dim (kv_a_proj_with_mqa's rows)
    q_mla_width,  // num_attention_heads * (qk_nope_head_dim + qk_rope_head_dim)
    o_mla_width,  // num_attention_heads * v_head_dim
    mla_nope,     // qk_nope_head_dim
    mla_v,        // v_head_dim
    // Mamba2 layers (ModelConfig::mamba2, nemotron_h): d_inner = mamba_num_heads * mamba_head_dim,
    // the conv channels d_inner + 2 * n_groups * ssm_state_size, in_proj's rows d_inner + those
    // channels + mamba_num_heads (z, x B C, dt), the heads, the groups and one group's width.
    ssm_inner,
    ssm_conv_channels,
    ssm_in_width,
    ssm_heads,
    ssm_groups,
    ssm_group_width,
    ssm_conv_kernel,  // conv_kernel (conv1d's taps per channel)
    // LatentMoE (ModelConfig::moe_latent_size, Nemotron 3 Super): the latent width, and the width
    // the routed experts work at (the latent width when there is one, else hidden_size).
    moe_latent,
    expert_width,
    // Per-layer input embeddings (ModelConfig::per_layer_input_width, gemma4's E2B / E4B): the
    // per-layer width, and it times num_hidden_layers (the table holding every layer's slice).
    per_layer_input,
    per_layer_input_all,
};

// How the rows of a source tensor are placed in the GGUF tensor. Only whole rows move (with each
// row's groups of codes, scales and mins), which is exact for every encoding. (3-D expert
// stacking is TensorSpec::stacked_hf, orthogonal to this.)
enum class RowTransform : uint8_t {
    none,
    // llama's LlamaModel.permute: per head of D rows, GGUF row h*D + 2*i + j holds source row
    // h*D + j*(D/2) + i (i < D/2, j in {0,1}); heads = num_attention_heads ...
    rope_pairs_q_heads,
    // ... or num_key_value_heads.
    rope_pairs_kv_heads,
    // gemma3 token_embd: only the first vocab_size rows (Gemma3Model.modify_tensors drops the rows
    // past the real vocabulary); a source with exactly vocab_size rows is copied as it is.
    first_vocab_rows,
    // gpt-oss gate_up_proj: gate and up rows interleaved along the source's dim 1 ([E, 2F, cols];
    // its bias [E, 2F]); the GGUF tensor keeps the even (gate) or the odd (up) ones, in order, as
    // GptOssModel slices [:, ::2] / [:, 1::2]. Whole rows move: exact.
    even_rows,
    odd_rows,
    // transformers' fused experts mlp.experts.gate_up_proj [E, 2F, cols] (Qwen2MoeModel's split,
    // qwen35moe): the GGUF tensor keeps each expert's first F rows (gate) or its last F (up), as
    // data_torch[..., :n_ff, :] / [..., n_ff:, :] does; the second row of the same HF name is
    // its other part (split_parts). Whole rows move: exact.
    first_half_rows,
    second_half_rows,
    // xlm-roberta position_embd: the rows after the first ModelConfig::position_offset
    // (pad_token_id + 1: RoBERTa numbers positions from there; XLMRobertaModel.modify_tensors
    // drops the rows before). The source table must have exactly max_position_embeddings rows.
    skip_position_offset,
    // Linear attention's V-head reorder (arch/transforms.hpp v_head_source_rows), done only when
    // the key and value head counts differ: the value rows after q and k of in_proj_qkv and the
    // value channels after q and k of conv1d (units of the value head dim) ...
    v_heads_after_qk,
    // ... every row of in_proj_z (units of the value head dim) ...
    v_heads_rows,
    // ... every row of in_proj_a / in_proj_b, every value of A_log / dt_bias (units of 1) ...
    v_heads_single,
    // ... and the columns of out_proj in blocks of the value head dim (whole blocks move: the
    // tensor's "rows" for the move are those blocks).
    v_heads_columns,
    // A source tensor split into several GGUF tensors (split_parts): deepseek2's kv_b_proj,
    // [heads * (qk_nope_head_dim + v_head_dim), kv_lora_rank], each head's nope rows then its v
    // rows (DeepseekV2Model.modify_tensors). attn_k_b takes each head's nope rows transposed (GGUF
    // value (h*kv_lora + c)*nope + j is source value (h*(nope+v) + j)*kv_lora + c): single values
    // move, exact for float sources, not for 1-D quantization groups along the rows. attn_v_b
    // takes each head's v rows (whole rows: exact for every encoding).
    mla_k_b,
    mla_v_b,
    // Qwen3-Next's in_proj_qkvz (Qwen3NextModel.modify_tensors), split into two GGUF tensors
    // (split_parts): its rows are linear_num_key_heads groups, each [q (key head dim), k (key
    // head dim), v (r * value head dim), z (r * value head dim)] with r = value heads / key heads.
    // attn_qkv takes every group's q rows, then every group's k rows, then every v; attn_gate
    // every z (arch/transforms.hpp qkvz_source_rows). Whole rows move: exact for every encoding.
    qkvz_qkv,
    qkvz_z,
    // Qwen3-VL-MoE's fused experts, stored transposed (Qwen3VLMoeTextModel.modify_tensors):
    // mlp.experts.gate_up_proj [E, hidden, 2F] gives ffn_gate_exps its first F columns and
    // ffn_up_exps its last F (split_parts), each expert transposed to [F, hidden];
    // mlp.experts.down_proj [E, F, hidden] is transposed to [hidden, F] per expert. Single values
    // move: exact for float sources only (plan/expert_transpose.hpp).
    experts_t_first_half,
    experts_t_second_half,
    experts_t,
    // mlx-lm's split experts (gemma4's SwitchGLU: experts.switch_glu.gate_proj and up_proj, each
    // [E, F, cols]) fused into the one GGUF tensor [E, 2F, cols] the converter writes from
    // transformers' experts.gate_up_proj: each expert's F gate rows, then its F up rows. Both
    // specs name the same GGUF tensor; the plan pairs the two sources (plan/expert_fuse.hpp).
    // Whole rows move: exact for every encoding.
    fused_gate_rows,
    fused_up_rows,
};

// What happens to the values of a float tensor (a norm) on the way to GGUF.
enum class ValueTransform : uint8_t {
    none,
    // gemma RMSNorm weights: llama.cpp's converter writes weight + 1, the add done in the dtype
    // the converter holds the tensor in (docs/architectures.md "gemma"); the result is F32. A
    // quantized source for such a tensor is a BLOCKER.
    add_one,
    // Qwen3.5's A_log: ssm_a = -exp(A_log) as the converter computes it (arch/transforms.hpp
    // neg_exp_f32 / neg_exp_f16), F32. A quantized source is a BLOCKER.
    neg_exp,
};

enum class Presence : uint8_t {
    absent,                // llama.cpp's graph has no such tensor: refused
    optional,              // loaded when present
    required,              // the graph needs it
    required_unless_tied,  // required unless tie_word_embeddings (output.weight)
    // required when the model has per-layer input embeddings (ModelConfig::per_layer_input_width
    // not 0, gemma4's E2B / E4B), optional otherwise
    required_with_per_layer_input,
    // required when config.json has a moe_latent_size (ModelConfig::moe_latent_size: the latent
    // projections, without which the experts' width does not meet the hidden state), absent else
    required_with_moe_latent,
};

// How a tensor's source values are stored, beyond a plain copy of one source tensor.
enum class SourceRole : uint8_t {
    plain,
    // One GGUF tensor [E, rows, cols] (ne {cols, rows, E}) stacked from E per-expert source tensors
    // named by `hf` with "{e}" = 0..E-1 (HF, mcq-v1, float), or read whole from the pre-stacked
    // `stacked_hf` tensor (MLX switch_mlp). Experts stack in index order; whole rows move: exact.
    experts,
    // The MoE router (and qwen2_moe's shared-expert gate): always written as exact F32 values
    // (code*scale+min in binary32, or the float values widened), as every GGUF llama.cpp's
    // converter writes keeps it F32; mlx-lm stores it at 8 bits, for which no exact block type
    // exists. A convention for this role only: other weight matrices still follow the BLOCKER rule.
    router_f32,
    // An encoder's position and token-type tables: always exact F32 like the router (llama.cpp's
    // converter forces them F32 and its graph adds a view of token_types, which a block type
    // cannot take); a quantized source gives its exact dequantized values.
    table_f32,
    // A reranker's pooler (BertPooler dense, written as `cls`): kept only when the checkpoint has
    // a classifier head (a tensor of role `classifier`); an embedder's pooler is left out, as
    // llama.cpp's converter leaves it out (sentence-transformers pools the hidden states).
    reranker_pooler,
    // A reranker's classifier (`cls.output`): its presence makes the file a reranker (pooling
    // RANK).
    classifier,
};

// One tensor of the table. Per-layer tensors are named without "layers.N." / "blk.N.".
struct TensorSpec {
    std::string_view hf;    // stem without ".weight" / ".bias", e.g. "self_attn.q_proj"
    std::string_view gguf;  // stem without suffix, e.g. "attn_q"
    Presence weight = Presence::required;
    Presence bias = Presence::absent;        // a bias has ne {ne[rank-1]} (the weight's rows)
    uint8_t rank = 1;                        // 1, 2 or 3 (stacked experts)
    std::array<Dim, 3> ne{};                 // ggml order: ne[0] is the row length
    RowTransform rows = RowTransform::none;  // applies to the weight and its bias
    SourceRole role = SourceRole::plain;
    std::string_view
        stacked_hf{};  // experts: the MLX pre-stacked stem ("mlp.switch_mlp.gate_proj")
    ValueTransform values = ValueTransform::none;
    // Hybrid models: the layer kinds (bit k: ModelConfig::layer_kinds value k) that hold this
    // tensor; 0: every layer.
    uint8_t kinds = 0;
    // A name without ".weight" / ".bias" on both sides (Qwen3.5's A_log -> ssm_a, dt_bias ->
    // ssm_dt.bias): hf and gguf are the whole names after the layer prefix.
    bool bare = false;
    // The source's size-1 dims are dropped (conv1d's [channels, 1, kernel] -> [channels, kernel],
    // the converter's squeeze()).
    bool squeeze = false;
    // The source name has no ".weight" (a registered buffer, gemma4's layer_scalar) while the
    // GGUF name has one, as the converter's filter_tensors appends it.
    bool hf_bare = false;
    // The source's values are laid out as the GGUF ne says, same count (the converter's reshape:
    // Mamba2's A [heads] -> [heads, 1], norm [d_inner] -> [n_groups, d_inner / n_groups]). Float
    // sources only: a quantized one is a BLOCKER.
    bool reshape = false;
    // llama.cpp's loader creates this row on the trunk's layers only, never on the MTP layers
    // after them (nemotron_h_moe's latent projections, v0.4.0): the converter still writes it
    // there when the checkpoint has it, and the loader then counts a tensor it did not create and
    // refuses the file ("wrong number of tensors"). Never required on an MTP layer.
    bool trunk_only = false;
};

// The {arch}.* hyper-parameter KVs an architecture writes, in the order listed.
enum class ArchKv : uint8_t {
    context_length,
    embedding_length,
    block_count,
    feed_forward_length,
    // TextModel writes it only when config.json has intermediate_size (Qwen3.5 MoE has none:
    // ModelConfig::intermediate_size_given).
    feed_forward_length_given,
    head_count,
    head_count_kv,
    rope_freq_base,
    rms_epsilon,
    key_length,
    value_length,
    rope_dimension_count,
    vocab_size,
    expert_count,                       // num_experts
    expert_used_count,                  // num_experts_per_tok
    expert_feed_forward_length,         // moe_intermediate_size
    expert_shared_feed_forward_length,  // shared_expert_intermediate_size
    // phi3 (Phi3MiniModel.set_gguf_parameters):
    rope_scaling_original_context_length,  // original_max_position_embeddings
    rope_dimension_count_rotary,  // int(partial_rotary_factor * hidden_size) // num_attention_heads
    sliding_window_or_zero,       // attention.sliding_window, 0 when config.json has none (phi3)
    // Written only when config.json has the value (gemma2/gemma3, docs/architectures.md):
    attn_logit_softcapping,   // {arch}.attn_logit_softcapping
    final_logit_softcapping,  // {arch}.final_logit_softcapping
    sliding_window,           // {arch}.attention.sliding_window (not when sliding_window_pattern 1)
    rope_freq_base_swa,       // {arch}.rope.freq_base_swa (rope_local_base_freq)
    // Encoders (BertModel.set_gguf_parameters):
    layer_norm_epsilon,  // {arch}.attention.layer_norm_epsilon (layer_norm_eps)
    causal_false,        // {arch}.attention.causal = false
    // gpt-oss (GptOssModel.set_gguf_parameters): expert_feed_forward_length = intermediate_size.
    expert_feed_forward_length_ffn,
    // EmbeddingGemma.set_gguf_parameters: attention.sliding_window always (config.json must have
    // it), and {arch}.dense_2_feat_in/out, dense_3_feat_in/out from the Dense modules' config.json
    // (each written when that module is present).
    sliding_window_required,
    dense_2_feat_in,
    dense_2_feat_out,
    dense_3_feat_in,
    dense_3_feat_out,
    // modernbert (ModernBertModel.set_gguf_parameters):
    sliding_window_pattern,  // {arch}.attention.sliding_window_pattern, when config.json has one
    rope_scaling_type_none,  // {arch}.rope.scaling.type = "none"
    hidden_activation,       // {arch}.hidden_activation (hidden_activation), when present
    // TextModel.set_gguf_parameters (v0.4.0): key_length / value_length = head_dim only when
    // config.json has a head_dim (olmo2).
    key_length_given,
    value_length_given,
    // Olmo2Model, when config.json has a sliding_window: attention.sliding_window_pattern as one
    // BOOL per layer (layer_types[i] == "sliding_attention", else every 4th layer full).
    sliding_window_layers,
    // Ministral3Model (mistral3), when ModelConfig has them: rope.scaling.yarn_log_multiplier
    // (mscale_all_dim as given) and attention.temperature_scale (llama_4_scaling_beta).
    rope_scaling_yarn_log_multiplier,
    attention_temperature_scale,
    // _QwenMtpMixin: nextn_predict_layers = ModelConfig::nextn_layers, when not 0.
    nextn_predict_layers,
    // Qwen3NextModel's linear-attention KVs (ModelConfig::linear_attention): ssm.conv_kernel,
    // ssm.state_size (key head dim), ssm.group_count (key heads), ssm.time_step_rank (value
    // heads), ssm.inner_size (value head dim * value heads); full_attention_interval; and
    // rope.dimension_count = int(head_dim * partial_rotary_factor), the factor 0.25 by default.
    ssm_conv_kernel,
    ssm_state_size,
    ssm_group_count,
    ssm_time_step_rank,
    ssm_inner_size,
    full_attention_interval,
    rope_dimension_count_partial,
    // rope.dimension_sections (INT32 array): TextModel's, when config.json's rope parameters have
    // an mrope_section (padded to 4) ...
    rope_dimension_sections_given,
    // ... and _Qwen35MRopeMixin's [11, 11, 10, 0] when they have none.
    rope_dimension_sections_default,
    // Qwen3VLTextModel: n_deepstack_layers = ModelConfig::deepstack_layers, always (0 included).
    n_deepstack_layers,
    // Glm4MoeModel (ModelConfig's DeepSeek-style routing fields), each written when config.json
    // has its field: TextModel's expert_group_count (n_group) and expert_group_used_count
    // (topk_group), and its expert_gating_func where config.json names a score function (SIGMOID,
    // the value Glm4MoeModel sets again later: gguf-py keeps a rewritten key's first place) ...
    expert_group_count,
    expert_group_used_count,
    expert_gating_func_sigmoid_given,
    // ... rope.dimension_count = int(head_dim * partial_rotary_factor), the factor 0.5 when
    // config.json has none ...
    rope_dimension_count_partial_half,
    // ... expert_shared_count (n_shared_experts), leading_dense_block_count
    // (first_k_dense_replace), expert_gating_func SIGMOID (here when config.json names no score
    // function), expert_weights_scale (routed_scaling_factor), expert_weights_norm
    // (norm_topk_prob), nextn_predict_layers (num_nextn_predict_layers, 0 included).
    expert_shared_count,
    leading_dense_block_count,
    expert_gating_func_sigmoid,
    expert_weights_scale,
    expert_weights_norm,
    nextn_predict_layers_given,
    // Gemma4Model (ModelConfig::full_attention): attention.head_count_kv as one INT32 per layer
    // (the full layers' kv heads where layer_types says full_attention) when config.json has
    // num_global_key_value_heads, else the one number; key_length / value_length and
    // rope.dimension_count = the full layers' head_dim; key_length_swa / value_length_swa =
    // head_dim; rope.dimension_count_swa = head_dim (rope_parameters has no top-level
    // partial_rotary_factor); attention.shared_kv_layers (num_kv_shared_layers);
    // embedding_length_per_layer_input (hidden_size_per_layer_input, 0 when absent or null);
    // attention.sliding_window_pattern as one BOOL per entry of layer_types.
    head_count_kv_layers,
    // Gemma4Model: with use_double_wide_mlp, feed_forward_length rewritten in place as one INT32
    // per layer (intermediate_size, doubled from the first KV-shared layer on); else TextModel's
    // one number.
    feed_forward_length_double_wide,
    key_length_full,
    value_length_full,
    key_length_swa,
    value_length_swa,
    rope_dimension_count_full,
    rope_dimension_count_swa,
    shared_kv_layers,
    embedding_length_per_layer_input,
    sliding_window_layer_types,
    // DeepseekV2Model (ModelConfig::mla): head_count_kv = 1 (MLA as MQA); TextModel's
    // expert_gating_func from the score function config.json names (softmax 1, sigmoid 2,
    // sqrtsoftplus 4); key_length = kv_lora_rank + qk_rope_head_dim and value_length =
    // kv_lora_rank, at TextModel's place when config.json has a head_dim (gguf-py keeps a
    // rewritten key's first place), else at DeepseekV2Model's; vocab_size; q_lora_rank when set;
    // kv_lora_rank; key_length_mla = nope + rope, value_length_mla = v_head_dim;
    // expert_shared_count (0 when absent); expert_weights_norm only when true;
    // rope.dimension_count = qk_rope_head_dim.
    head_count_kv_one,
    expert_gating_func_named,
    key_length_mla_kv_given,
    value_length_mla_kv_given,
    key_length_mla_kv,
    value_length_mla_kv,
    q_lora_rank,
    kv_lora_rank,
    key_length_mla,
    value_length_mla,
    expert_shared_count_or_zero,
    expert_weights_norm_true,
    rope_dimension_count_mla,
    // NemotronHModel -> GraniteHybridModel (ModelConfig::mamba2): context_length 2^20 at
    // TextModel's place (no rope with SSM layers); feed_forward_length as one INT32 per layer
    // (intermediate_size on the MLP layers, 0 elsewhere) and attention.head_count_kv likewise
    // (num_key_value_heads on the attention layers); rope.freq_base only when config.json has
    // rope_theta; rope.dimension_count = hidden_size // num_attention_heads (GraniteModel drops
    // head_dim before LlamaModel reads it); rope.scaling.finetuned = false.
    context_length_ssm,
    feed_forward_length_mlp_layers,
    head_count_kv_attention_layers,
    rope_freq_base_given,
    rope_dimension_count_hidden,
    rope_scaling_finetuned_false,
    // NemotronHModel: moe_latent_size (UINT32), when config.json has one.
    moe_latent_size,
};

// Tensors computed from config.json rather than read from the source.
enum class ExtraTensor : uint8_t {
    rope_freqs_llama3,  // rope_freqs.weight, F32 [head_dim/2], when rope_scaling is "llama3"
    // rope_factors_long/short.weight, F32 [rope dims/2], from rope_scaling.long_factor /
    // short_factor when the type is "longrope" or "su" (phi3).
    rope_factors_long,
    rope_factors_short,
    // rope_freqs.weight, F32 [full head_dim/2], for the "proportional" rope of gemma4's full
    // layers (Gemma4Model.generate_extra_tensors): 1.0 for the rotated pairs, 1e30 after.
    rope_freqs_proportional,
};

// A config.json field and, as JSON text, the value transformers' config class gives it when the
// file leaves it out. llama.cpp's converter loads config.json through transformers, so it sees
// these values (gemma-3-4b-it's text_config has no num_attention_heads, vocab_size, ...).
struct ConfigDefault {
    std::string_view field;
    std::string_view json_value;  // "8", "1e-06", "true"
};

// A per-layer scalar source tensor the converter turns into one entry of a FLOAT32 array KV
// instead of a tensor (apertus: layers.N.mlp.act_fn.alpha_n -> xielu.alpha_n[N]); the key is
// written as given, without the {arch}. prefix, as gguf-py names these.
struct LayerScalarKv {
    std::string_view hf;   // stem after "layers.N.", e.g. "mlp.act_fn.alpha_n"
    std::string_view key;  // the whole GGUF key, e.g. "xielu.alpha_n"
};

// The tensors besides attention (q, k, v, qkv, output: build_qkv and wo_s in every graph but
// deepseek2's, see attention_output_only) whose NVFP4 `.scale` the graph applies.
struct GraphScales {
    bool output = false;     // output.weight
    bool dense_ffn = false;  // ffn_gate / ffn_up / ffn_down
    bool experts = false;    // ffn_gate_exps / ffn_up_exps / ffn_down_exps
    // Qwen3.5's gated delta-net: attn_gate, ssm_beta, ssm_alpha, ssm_out (src/models/qwen35.cpp).
    bool linear_attention = false;
    bool ssm = false;             // ssm_in / ssm_out (the Mamba2 layers' build_lora_mm: nemotron_h)
    bool shared_experts = false;  // ffn_gate_shexp / ffn_up_shexp / ffn_down_shexp
    bool nextn = false;           // nextn.eh_proj (the MTP head's projection)
    // Of the attention roles only attn_output (deepseek2's MLA: its q / kv products are plain
    // ggml_mul_mat calls; wo goes through build_attn with wo_s).
    bool attention_output_only = false;
};

struct Architecture {
    std::string_view gguf_arch;                     // general.architecture
    std::span<const std::string_view> model_types;  // config.json model_type values it accepts
    std::span<const TensorSpec> model_first;        // written before the layers
    std::span<const TensorSpec> layer;              // per layer, in output order
    std::span<const TensorSpec> model_last;         // written after the layers
    std::span<const ArchKv> kvs;
    std::span<const ExtraTensor> extras;  // the extra tensors this architecture may write
    // Tensors of a multimodal checkpoint that are not part of the text GGUF (HF name prefixes after
    // the "model." / "language_model." prefixes are stripped, e.g. "vision_tower."): left out
    // with a note, never refused.
    std::span<const std::string_view> left_out_prefixes = {};
    // Fields read_model_config fills in when config.json (after text_config) lacks them or has
    // null.
    std::span<const ConfigDefault> config_defaults = {};
    // How the source names its layers: "layers." (decoders, after "model."), "encoder.layer."
    // (BERT, after its "bert." / "roberta." head prefix).
    std::string_view hf_layer_prefix = "layers.";
    // Prefixes a task head puts before the base model's names ("bert." in BertForMaskedLM /
    // BertForSequenceClassification), stripped before the table is consulted.
    std::span<const std::string_view> hf_head_prefixes = {};
    // An encoder (bert): token types (tokenizer.ggml.token_type_count), a pooling type that must be
    // known (BLOCKER otherwise), RANK pooling when a classifier head is present.
    bool encoder = false;
    // rope_scaling "yarn" is written (type, factor, original_context_length, yarn_beta_fast/slow)
    // as TextModel.set_gguf_parameters writes it (gpt-oss).
    bool rope_yarn = false;
    // A sentence embedder that is no BERT (EmbeddingGemma): a pooling type from modules.json is
    // required (BLOCKER otherwise) and its sentence-transformers Dense modules are read
    // (ModelConfig::dense_2 / dense_3, source tensors "2_Dense.linear.weight" /
    // "3_Dense.linear.weight").
    bool sentence_embedder = false;
    // The tokenizer.ggml.pre llama.cpp's converter writes for this family's byte-level BPE
    // tokenizer.json whose pre-tokenizer is a plain ByteLevel (no Split regex to name it by):
    // modernbert's "modern-bert". Empty: such a tokenizer needs --tokenizer-pre.
    std::string_view byte_level_pre = {};
    // The family's own GGUF tokenizer model when its converter class writes one of its own
    // (gemma4: Gemma4Model.set_vocab's "gemma4"); empty: the model follows the tokenizer's shape.
    std::string_view tokenizer_model = {};
    // The converter class reads a tiktoken vocabulary (tiktoken.model + tokenization_kimi.py, no
    // tokenizer.json) as DeepseekV2Model.set_vocab's "kimi-k2" branch does
    // (model/tokenizer_tiktoken.hpp); false: such a folder is a BLOCKER naming tiktoken.model.
    bool tiktoken_vocab = false;
    // Why this family's tokenizer is not written yet: the plan refuses it with this BLOCKER
    // (naming tokenizer.json) and still plans every tensor. Empty: the tokenizer is read as usual.
    std::string_view tokenizer_blocker = {};
    // Non-parameter buffers the converter class of this family drops by name (HF names after the
    // head prefixes, e.g. BertModel.filter_tensors' "embeddings.position_ids"), beside those it
    // drops for every architecture (is_converter_buffer).
    std::span<const std::string_view> converter_buffers = {};
    // Per-layer scalars written as array KVs (LayerScalarKv), in the order the converter writes
    // the arrays; each layer must have one value of each.
    std::span<const LayerScalarKv> layer_scalar_kvs = {};

    // Multi-token-prediction layers kept apart in the checkpoint (_QwenMtpMixin.filter_tensors):
    // "mtp.layers.K.X" is layer num_hidden_layers + K's X, and each {hf, stem} of mtp_renames
    // ("mtp.fc" -> "eh_proj") the first MTP layer's `stem` in the layer table. Empty: none.
    std::string_view mtp_layer_prefix = {};
    std::span<const std::pair<std::string_view, std::string_view>> mtp_renames = {};
    // NemotronHModel's fold: every "mtp.layers.K.REST" is layer num_hidden_layers' REST whatever
    // K (its attention sub-layer mtp.layers.0 and its MoE sub-layer mtp.layers.1 become one
    // block), and mtp_renames hold whole source stems ("mtp.layers.1.norm" ->
    // "post_attention_layernorm"), looked up first. Back from GGUF, a row of the layer kinds
    // mtp_fold_second_kinds (TensorSpec::kinds bits) is spelled mtp.layers.1, any other
    // mtp.layers.0.
    bool mtp_fold = false;
    uint8_t mtp_fold_second_kinds = 0;
    // A loader that takes its MTP layers all or nothing by one probe tensor (glm4moe loads them
    // only when blk.{num_hidden_layers}.nextn.eh_proj is there): with the probe present, every MTP
    // layer's required rows are required too (required_mtp_tensors). Empty: they stay optional.
    std::string_view mtp_probe = {};
    // The converter class takes --no-mtp (its supports_mtp_export): PlanOptions::no_mtp leaves the
    // MTP layers out (block_count the main layers, no nextn_predict_layers); for any other
    // architecture that option is an input error, as the converter refuses it.
    bool supports_no_mtp = false;
    // The layers at or past num_hidden_layers are left out with a note (DeepseekV2Model.skip_mtp
    // drops the MTP layers llama.cpp's deepseek2 graph does not run).
    bool drops_mtp_layers = false;
    // mlx-lm's (and mlx-vlm's) sanitize already added the 1 to every ValueTransform::add_one norm
    // when it converted the checkpoint (Qwen3.5: input_layernorm, post_attention_layernorm, q_norm,
    // k_norm, model.norm): an MLX source's such norms are written as they are, F32.
    bool mlx_norms_shifted = false;

    // Which tensors' NVFP4 per-tensor factor (`<tensor>.scale`) llama.cpp's graph multiplies in
    // (the *_s arguments of src/models/<arch>.cpp); a factor other than 1 elsewhere is a BLOCKER.
    GraphScales nvfp4_scales = {};
    // A per-layer [num_experts] float source (the name after "layers.N.") that llama.cpp's
    // converter multiplies into each stacked ffn_down_exps expert's NVFP4 per-tensor factor when
    // those experts are NVFP4 per-expert modules, instead of writing it as ffn_down_exps.scale
    // itself (gemma4's router.per_expert_scale: Gemma4Model._generate_nvfp4_tensors, the F32
    // product weight_scale_2 * per_expert_scale[e]). Empty: none.
    std::string_view nvfp4_down_exps_factor{};

    // --- Hooks: what one family does that a table does not say (null: nothing) ---------------
    // Picks this architecture for a config.json (text_config merged) whatever its model_type says,
    // before any architecture is looked up by model_type (EmbeddingGemma: a gemma3_text config
    // whose architectures[0] is Gemma3TextModel, as the converter picks its class).
    bool (*claims_config)(const nlohmann::json& root) = nullptr;
    // Rewrites config.json before it is read (after config_defaults): field names the family
    // spells differently, the converter's own rewrites, and its asserts as one-line input errors
    // (rebox::Error naming the config.json field).
    void (*prepare_config)(nlohmann::json& root) = nullptr;
    // Fills in what read_model_config's common fields do not hold, from config.json (xlm-roberta's
    // position offset); throws an input rebox::Error naming the field.
    void (*finish_config)(const nlohmann::json& root, ModelConfig& config) = nullptr;
    // Hybrid models: sets ModelConfig::layer_kinds from the config's numbers (qwen35: from
    // full_attention_interval and nextn_layers), as llama.cpp's loader derives them; finish_config
    // calls it, and `rebox check` on a file's KVs.
    void (*set_layer_kinds)(ModelConfig& config) = nullptr;
    // What in config.json llama.cpp's graph for this family cannot run, one reason each (the
    // values it hard-codes: gpt-oss's SwiGLU clamp and layer pattern; EmbeddingGemma's Dense
    // sizes). Appended to config_problems.
    void (*config_checks)(const Architecture& arch, const ModelConfig& config,
                          std::vector<std::string>& problems) = nullptr;
    // The family's own vocabulary rules, after tokenizer.json is read (glm4moe's _set_vocab_glm:
    // the pre-tokenizer's name and special tokens found by their text); `pre_given`: the user
    // named the pre-tokenizer (--tokenizer-pre). Throws a blocker-class rebox::Error naming
    // tokenizer.json for a vocabulary the converter cannot take.
    void (*finish_vocab)(TokenizerVocab& vocab, bool pre_given) = nullptr;
};

// The architecture that accepts this config.json model_type (or has this GGUF arch name); null
// when none does.
const Architecture* find_architecture(std::string_view model_type);

// The architecture whose claims_config hook takes this config.json (text_config merged, or the
// top level as it is); null when none does (then model_type decides).
const Architecture* claiming_architecture(const nlohmann::json& root);

// Whether llama.cpp's graph of `arch` multiplies in the NVFP4 `.scale` of a tensor of this role
// ("attn_q", "ffn_down_exps", "output": the GGUF name without "blk.N." and ".weight").
bool graph_applies_nvfp4_scale(const Architecture& arch, std::string_view role);

// Every accepted model_type, in registry order ("qwen3, qwen2, llama, mistral"), for messages.
std::string supported_model_types();

// The registry itself (tests walk it).
std::span<const Architecture* const> all_architectures();

// --- Names --------------------------------------------------------------------------------------

// The HF name without a leading "model." and without a "language_model." component anywhere
// (multimodal checkpoints: "language_model.model.layers.0..." and
// "model.language_model.layers.0..." both become "layers.0...", as convert_hf_to_gguf's
// ModelBase.filter_tensors reads them).
std::string strip_model_prefix(std::string_view hf_name);

// The layer index N of an HF name "layers.N.*" (with or without "model." / "language_model.");
// nullopt for other names.
std::optional<uint32_t> hf_layer_index(const Architecture& arch, std::string_view hf_name);

// True when the (stripped) HF name lies under one of the architecture's left_out_prefixes.
bool is_left_out(const Architecture& arch, std::string_view hf_name);

// True when llama.cpp's converter skips this HF name as a non-parameter buffer: for every
// architecture a name ending in ".attention.masked_bias", ".attention.bias" or
// ".rotary_emb.inv_freq" (ModelBase.prepare_tensors), and the family's converter_buffers. Such a
// tensor is left out with a note whatever its dtype (an I64 position_ids included).
bool is_converter_buffer(const Architecture& arch, std::string_view hf_name);

// The architecture's layer_scalar_kvs entry (its index) and layer an HF name (with or without
// "model." / "language_model.") is a value of: "layers.N.<hf>" with nothing after; nullopt else.
std::optional<std::pair<size_t, uint32_t>> match_layer_scalar(const Architecture& arch,
                                                              std::string_view hf_name);

// What a tensor name resolves to in the table.
struct TensorRef {
    const TensorSpec* spec = nullptr;
    std::optional<uint32_t> layer;  // per-layer tensors
    bool is_bias = false;
    std::string gguf_name;  // "blk.3.attn_q.weight"
    // "layers.3.self_attn.q_proj.weight" (unprefixed). For an experts spec: the per-expert name
    // of the expert resolved, or from resolve_gguf the pattern with "{e}" left in.
    std::string hf_name;
    std::optional<uint32_t> expert;  // resolve_hf of a per-expert tensor: its expert index
    bool stacked_source = false;     // resolve_hf of an MLX pre-stacked tensor (stacked_hf)
};

// HF name (with or without "model.") -> its table entry, or nullopt when the architecture does not
// load it (absent weight or bias). Per-expert names ("layers.0.mlp.experts.5.up_proj.weight") and
// pre-stacked ones ("layers.0.mlp.switch_mlp.up_proj.weight") both resolve to the stacked GGUF
// tensor.
// main_layers: config.json num_hidden_layers, which an architecture with MTP layers
// (mtp_layer_prefix) needs to place "mtp.*" names after the last layer (0: they do not resolve).
std::optional<TensorRef> resolve_hf(const Architecture& arch, std::string_view hf_name,
                                    uint32_t main_layers = 0);
std::optional<TensorRef> resolve_gguf(const Architecture& arch, std::string_view gguf_name,
                                      uint32_t main_layers = 0);

// --- Shapes, completeness, order
// ------------------------------------------------------------------

// ne (ggml order) llama.cpp expects for this GGUF name given config.json; nullopt when the graph
// has no such tensor (including extra tensors, which have their own rules).
std::optional<std::vector<int64_t>> expected_ne(const Architecture& arch, const ModelConfig& config,
                                                std::string_view gguf_name);

// Every tensor the graph requires for this config, in output order (extras not included).
std::vector<std::string> required_tensors(const Architecture& arch, const ModelConfig& config);

// What a loader takes instead of a required tensor when that one is absent, all of them together:
// ffn_gate_exps beside ffn_up_exps for a fused ffn_gate_up_exps (gemma4's loader: transformers'
// fused experts, or ModelOpt's per-expert modules stacked apart). Empty: nothing stands in.
std::vector<std::string> required_alternatives(std::string_view gguf_name);

// The other GGUF tensors the source tensor of `ref` is split into (RowTransform::mla_k_b /
// mla_v_b, first_half_rows / second_half_rows): the later rows of the layer table with the same HF
// stem, for the same layer. Empty for a tensor that is not split; resolve_hf gives the first part.
std::vector<TensorRef> split_parts(const Architecture& arch, const TensorRef& ref);

// The required rows of the MTP layers (num_hidden_layers .. + nextn_layers - 1), which the plan
// requires once the architecture's mtp_probe tensor is there.
std::vector<std::string> required_mtp_tensors(const Architecture& arch, const ModelConfig& config);

// Sort key for the output order: extras, model_first, layer by layer in table order (bias right
// after its weight), model_last; names not in the table sort before model_last.
std::pair<int64_t, int> output_rank(const Architecture& arch, std::string_view gguf_name);

// The layer index of "blk.N.*", or nullopt.
std::optional<int64_t> layer_of(std::string_view gguf_name);

// Number of heads the transform works on for this config (0 for RowTransform::none).
uint32_t transform_heads(RowTransform transform, const ModelConfig& config);

// The per-expert source name of expert `e` for a pattern holding "{e}".
std::string expert_name(std::string_view pattern, uint32_t e);

// The pre-stacked (MLX) source name of an experts tensor of `layer`, unprefixed.
std::string stacked_name(const TensorSpec& spec, uint32_t layer);

// True when every model of the architecture has mixture-of-experts tensors (a stacked-experts row
// that is not optional).
bool has_experts(const Architecture& arch);

// What in config.json this architecture cannot write (one reason each), e.g. an MoE config without
// num_experts, or one with dense layers between the MoE ones (decoder_sparse_step > 1,
// mlp_only_layers) which the tables do not describe.
std::vector<std::string> config_problems(const Architecture& arch, const ModelConfig& config);

// --- Rope scaling
// ---------------------------------------------------------------------------------

// What config.json's rope_scaling asks of the GGUF for this architecture.
struct RopeScalingPlan {
    std::optional<std::string> blocker;  // set: the type cannot be written (reason)
    std::string blocker_field;           // what the blocker names; empty: the rope_scaling
    std::string blocker_fix;             // how to fix it; empty: the general advice
    std::string kv_type;                 // "linear": {arch}.rope.scaling.type
    std::optional<float> kv_factor;      // {arch}.rope.scaling.factor
    bool rope_freqs = false;             // write rope_freqs.weight (llama3, proportional)
    ExtraTensor rope_freqs_kind = ExtraTensor::rope_freqs_llama3;  // which values it holds
    bool rope_factors = false;         // write rope_factors_long/short.weight (longrope, su)
    std::optional<float> attn_factor;  // {arch}.rope.scaling.attn_factor (longrope, su)
    // "yarn" (kv_type "yarn", kv_factor): rope.scaling.original_context_length, the
    // extrapolation and attention factors when config.json gives them, and the betas.
    std::optional<uint32_t> yarn_original_context;
    std::optional<float> yarn_ext_factor;
    std::optional<float> yarn_attn_factor;
    std::optional<float> yarn_beta_fast;
    std::optional<float> yarn_beta_slow;
};
RopeScalingPlan plan_rope_scaling(const Architecture& arch, const ModelConfig& config);

// The GGUF name of an extra tensor.
std::string_view extra_tensor_name(ExtraTensor extra);

// How a Dim follows from config.json, with the numbers, for messages:
// "num_attention_heads 4 * head_dim 16 + 2 * num_key_value_heads 2 * head_dim 16 = 128".
std::string explain_dim(Dim dim, const ModelConfig& config);

// What each ne[i] of a GGUF tensor follows from (row length, rows, experts; nullopt as
// expected_ne).
// With `config`, the row of the tensor's layer kind (TensorSpec::kinds), as expected_ne takes it.
std::optional<std::array<Dim, 3>> tensor_dims(const Architecture& arch, std::string_view gguf_name,
                                              const ModelConfig* config = nullptr);

// The phi3 rotary dimension count: int(partial_rotary_factor * hidden_size) //
// num_attention_heads (Phi3MiniModel), partial_rotary_factor from rope_scaling, else the top
// level, else 1.0.
uint32_t rotary_dimension_count(const ModelConfig& config);

// original_max_position_embeddings from rope_scaling, else the top level (nullopt: neither).
std::optional<uint32_t> original_context_length(const ModelConfig& config);

}  // namespace rebox::arch
