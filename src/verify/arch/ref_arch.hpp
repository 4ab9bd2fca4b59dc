// verify's own record of an architecture: everything verify expects of one family that is not the
// HF <-> GGUF name map, written from llama.cpp's converter and loader and never read from the
// writer's registry (src/arch/). One file per architecture in this folder fills one record; the
// one list of them is ref_registry.cpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "verify/sources/ref_config.hpp"

namespace rebox::verify_ref {

class KvChecker;  // verify/metadata/kv_checker.hpp

// The optional KVs an architecture's converter class writes; their values are derived in
// metadata_checks.cpp. The KVs every model carries (embedding_length, block_count, head_count,
// context_length, feed_forward_length, the expert counts of a mixture of experts) are checked for
// every architecture and not listed. What only one converter class writes is the record's own
// check_kvs hook.
enum class RefKv : uint8_t {
    rope_freq_base,                        // rope_theta
    rms_epsilon,                           // rms_norm_eps
    key_length,                            // head_dim
    value_length,                          // head_dim
    rope_dimension_count,                  // head_dim
    rope_dimension_count_rotary,           // phi3: partial_rotary_factor of the head
    vocab_size,                            // {arch}.vocab_size
    sliding_window_or_zero,                // attention.sliding_window, 0 for none
    rope_scaling_original_context_length,  // phi3's long rope
    expert_feed_forward_length_ffn,        // expert_feed_forward_length = intermediate_size
    attn_logit_softcapping,                // when config.json has it
    final_logit_softcapping,               // when config.json has it
    sliding_window,                        // when config.json has it (not with pattern 1)
    rope_freq_base_swa,                    // rope_local_base_freq, when config.json has it
    sliding_window_required,               // attention.sliding_window, config.json must have it
    dense_2_feat_in,                       // dense_2_feat_in/out from the Dense module
    dense_3_feat_in,                       // dense_3_feat_in/out from the Dense module
    sliding_window_pattern,                // when config.json has it
    hidden_activation,                     // when config.json has it
    rope_scaling_type_none,                // rope.scaling.type = "none" always
    rope_scaling_yarn,                     // a yarn rope_scaling: type, factor, context, betas
    head_dim_lengths_given,  // key/value_length = head_dim when config.json has one, else absent
    sliding_window_layers,   // with a sliding_window: RefConfig::sliding_layers as a BOOL array
};

// The GGUF tensors whose NVFP4 per-tensor factor (<weight>.scale) llama.cpp's graph of the
// architecture multiplies in (build_lora_mm's scale argument), by role.
enum RefScaleRoles : uint16_t {
    kScaleNone = 0,
    kScaleAttention = 1,         // attn_q / attn_k / attn_v / attn_qkv / attn_output
    kScaleFfn = 2,               // ffn_gate / ffn_up / ffn_down
    kScaleExperts = 4,           // ffn_{gate,up,down}_exps
    kScaleOutput = 8,            // output
    kScaleLinearAttention = 16,  // attn_gate / ssm_beta / ssm_alpha / ssm_out (Qwen3.5)
    kScaleSharedExperts = 32,    // ffn_{gate,up,down}_shexp
    kScaleNextn = 64,            // nextn.eh_proj
    kScaleSsm = 128,             // ssm_in / ssm_out (Mamba2 layers)
    // attn_output alone: deepseek2's MLA, whose q / q_a / q_b / kv_a_mqa / k_b / v_b products are
    // plain ggml_mul_mat calls and take no scale, while wo goes through build_attn with wo_s.
    kScaleAttentionOutput = 256,
};

// A per-layer scalar source tensor the converter writes as one entry of a FLOAT32 array KV, not
// as a tensor (apertus: layers.N.mlp.act_fn.alpha_n -> xielu.alpha_n[N]).
struct RefLayerScalar {
    std::string_view hf;   // after "layers.N."
    std::string_view key;  // the whole GGUF key (no {arch}. prefix)
};

struct RefArch {
    std::string_view gguf_arch;                       // general.architecture
    std::span<const std::string_view> model_types{};  // config.json model_type values it accepts
    // Chosen over model_types when it returns true (EmbeddingGemma: by architectures[0]); verify
    // then calls the model type by gguf_arch.
    bool (*selects)(const nlohmann::json& root, std::string_view model_type) = nullptr;
    // config.json: defaults and other names filled in before verify reads the usual fields, and
    // fields computed after.
    void (*prepare_config)(nlohmann::json& root) = nullptr;
    void (*finish_config)(const nlohmann::json& root, RefConfig& config) = nullptr;
    // Shapes of the names the decoder table (expected_shapes.cpp) does not know, HF order;
    // nullopt for a name this architecture does not know.
    std::optional<std::vector<int64_t>> (*shape)(const RefConfig& config,
                                                 std::string_view hf_name) = nullptr;
    std::span<const RefKv> kvs{};
    // The {arch}.* keys the converter class adds beyond the listed ones, checked by the record's
    // own code (after the listed ones), and whether that code checks head_count_kv itself
    // (gemma4's per-layer array, deepseek2's 1).
    void (*check_kvs)(KvChecker& kv, const std::string& arch, const RefConfig& config) = nullptr;
    bool own_head_count_kv = false;
    bool encoder =
        false;  // BertModel-style KVs: layer_norm_epsilon, causal false, no head_count_kv
    // The converter class is BertModel or derives from it, whose filter_tensors drops the
    // "embeddings.position_ids" buffer (sources/ref_buffers.hpp).
    bool bert_model_class = false;
    // Transforms (convert_hf_to_gguf): LlamaModel.permute of q/k weights and biases; every
    // "norm.weight" written as weight + 1 (Gemma); token_embd cut to vocab_size rows (Gemma 3).
    bool rope_permute_qk = false;
    bool norm_plus_one = false;
    // mlx-lm / mlx-vlm stored those norms with the 1 already added (Qwen3.5's sanitize): from an
    // MLX source they are checked as they are.
    bool mlx_norms_shifted = false;
    bool vocab_rows_cut = false;
    // Qwen3.5's linear-attention layers (Qwen3NextModel, _LinearAttentionVReorderBase): value
    // heads reordered when key and value head counts differ, ssm_a = -exp(A_log), conv1d
    // squeezed; ssm_norm (linear_attn.norm) is the one norm without + 1.
    bool linear_attention = false;
    // Qwen3NextModel itself (qwen3next): in_proj_qkvz split into attn_qkv and attn_gate
    // (sources/qkvz_index.hpp), in_proj_ba written as ssm_ba, and the value heads left grouped by
    // key head (no reorder: that is _LinearAttentionVReorderBase's).
    bool qkvz_split = false;
    // Tensors computed from config.json: llama3 rope_freqs, phi3 longrope's two factor tensors.
    bool llama3_rope_freqs = false;
    bool phi3_rope_factors = false;
    // gemma4: rope_freqs for the full layers' "proportional" rope (RefConfig::full_layers).
    bool proportional_rope_freqs = false;
    uint16_t scale_roles = kScaleNone;
    // sentence-transformers Dense modules beside the model (2_Dense, 3_Dense) are part of it.
    bool dense_modules = false;
    // Tokenizer: the pre-tokenizer name of a lone ByteLevel pre-tokenizer (llama.cpp names it by
    // the tokenizer's hash), and a byte-level BPE vocabulary read as an encoder's (sep / mask /
    // add_sep, no token types).
    std::string_view byte_level_pre{};
    bool encoder_bpe = false;
    // Per-layer scalars the converter gathers into array KVs (verify/values/ref_layer_scalars.hpp).
    std::span<const RefLayerScalar> layer_scalars{};
    // The multi-token-prediction layers are named like the others ("layers.N", N from
    // num_hidden_layers on; glm4moe), so layers up to num_hidden_layers + RefConfig::mtp_layers
    // are in range.
    bool mtp_in_layers = false;
    // _set_vocab_glm: the pre-tokenizer of GLM's regex is "glm4", and bos / eot / unk / eom are
    // the ids of [gMASK] / <|user|> / <|endoftext|> / <|observation|> where none is set yet.
    bool glm_vocab = false;
    // Gemma4Model.set_vocab: the gemma4 tokenizer model (ref_gemma4_vocab.cpp), no pre-tokenizer
    // KV.
    bool gemma4_vocab = false;
    // DeepseekV2Model: kv_b_proj is read by two GGUF tensors (attn_k_b, attn_v_b:
    // ref_transforms.hpp), and the layers from num_hidden_layers on (MTP) are left out.
    bool mla_kv_b_split = false;
    // mlx-lm's deepseek_v3 stores the two parts already split, in llama.cpp's layout: the sources
    // of attn_k_b / attn_v_b when the checkpoint has no kv_b_proj (read as they are).
    std::string_view mla_k_b_presplit{};
    std::string_view mla_v_b_presplit{};
    bool drops_mtp_layers = false;
    // The MTP layers' own source names ("mtp.": Qwen3.5): a checkpoint with none of them has no
    // MTP layers whatever config.json counts (mlx-lm drops them).
    std::string_view mtp_prefix{};
    // Qwen2MoeModel.modify_tensors: transformers' fused mlp.experts.gate_up_proj (gate rows, then
    // up rows, per expert) and mlp.experts.down_proj are the stacked experts' sources when the
    // checkpoint has them (sources/fused_experts_index.hpp).
    bool fused_experts = false;
    // ... stored transposed (Qwen3VLMoeTextModel: gate_up_proj [E, hidden, 2F], down_proj [E, F,
    // hidden]), each expert transposed by the converter.
    bool fused_experts_transposed = false;
    // config.json may have no intermediate_size (Qwen3_5MoeTextConfig has none): then TextModel
    // writes no feed_forward_length (RefConfig::intermediate_size_given).
    bool intermediate_size_optional = false;
    // NemotronHModel: context_length and feed_forward_length are the record's own (2^20, one
    // value per layer), checked by its check_kvs; Mamba2 layers: ssm_a = -exp(A_log) and A, D and
    // the norm reshaped to the record's shape (mamba2_shape), conv1d squeezed.
    bool own_context_and_ffn = false;
    // NemotronHModel.set_vocab: padded to a multiple of 8 with UNUSED "[PAD<id>]", and (the dense
    // model only) add_bos_token true.
    bool nemotron_vocab = false;
    bool nemotron_add_bos = false;
    bool mamba2 = false;
    std::optional<std::vector<int64_t>> (*mamba2_shape)(const RefConfig& config,
                                                        std::string_view gguf_tensor) = nullptr;
    // Gemma4Model's fused experts.gate_up_proj / down_proj, which mlx-lm stores split as
    // experts.switch_glu.gate_proj / up_proj / down_proj (sources/fused_experts_index.hpp
    // switch_glu_names): verify pairs the halves itself when the fused names are absent.
    bool mlx_switch_glu = false;
    // Gemma4Model from ModelOpt NVFP4: a stacked ffn_*_exps tensor's per-expert source pattern
    // ("layers.N.experts.{e}.down_proj.weight", verify's own spelling) where the checkpoint holds
    // per-expert modules; nullopt for other names.
    std::optional<std::string> (*split_experts)(std::string_view gguf_name) = nullptr;
    // ... and the per-layer [num_experts] float source (after "layers.N.") the converter
    // multiplies into those down_proj experts' NVFP4 factors (one F32 product each) instead of
    // writing it: gemma4's router.per_expert_scale.
    std::string_view nvfp4_down_exps_factor{};
    // NemotronHModel folds mtp.layers.0 and mtp.layers.1 into one block: config.json alone counts
    // the MTP layers (never the checkpoint's mtp.layers.K).
    bool mtp_fold = false;

    bool lists(RefKv kv) const {
        for (const RefKv listed : kvs)
            if (listed == kv) return true;
        return false;
    }
};

// Shared by families: TextModel's optional KVs (qwen2, qwen3 and their mixture-of-experts kin),
// GemmaModel's (gemma, gemma2), and Gemma3TextConfig's defaults (gemma3, EmbeddingGemma; embedding:
// sliding_window is read as written).
inline constexpr RefKv kDecoderKvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon,
                                        RefKv::key_length, RefKv::value_length,
                                        RefKv::rope_dimension_count};
// LlamaModel's: TextModel's plus vocab_size (llama, mixtral).
inline constexpr RefKv kLlamaKvs[] = {RefKv::rope_freq_base,       RefKv::rms_epsilon,
                                      RefKv::key_length,           RefKv::value_length,
                                      RefKv::rope_dimension_count, RefKv::vocab_size};
inline constexpr RefKv kGemmaKvs[] = {RefKv::rms_epsilon, RefKv::key_length, RefKv::value_length};
void fill_gemma3_text_defaults(nlohmann::json& root, bool embedding);

// config.json's field `key`, null when absent or null; a whole number of it from `low` to `cap`
// (an input error otherwise), nullopt when absent.
const nlohmann::json* ref_field(const nlohmann::json& root, const char* key);
// config.json's architectures[0], "" when there is no such string.
std::string_view ref_first_architecture(const nlohmann::json& root);
std::optional<uint32_t> ref_count(const nlohmann::json& root, const char* key, uint32_t cap,
                                  uint32_t low = 0);
// "layers.N.REST" (N up to 9 digits) -> N and REST; false for other names (ref_deepseek_moe.cpp).
bool ref_layer(std::string_view name, uint64_t* layer, std::string_view* rest);
// DeepSeek-style routing (glm4moe, deepseek2; ref_deepseek_moe.cpp): n_shared_experts,
// first_k_dense_replace, n_group, topk_group, routed_scaling_factor, norm_topk_prob and the score
// function of TextModel's keys, as config.json gives them.
void read_ref_moe_routing(const nlohmann::json& root, RefConfig& c);
// DeepSeek-style configs count their routed experts as n_routed_experts (required): copied to
// num_experts, and a num_local_experts dropped.
void rename_ref_routed_experts(nlohmann::json& root);
// The shapes of the MoE part of a DeepSeek-style layer (REST after "layers.N."): the leading
// dense layers' mlp (the decoder table's there, a shape no source has in a MoE layer), the
// router's e_score_correction_bias and the shared experts; nullopt for names it does not hold.
std::optional<std::vector<int64_t>> ref_moe_part_shape(const RefConfig& c, std::string_view rest,
                                                       bool moe);
// The shapes of a DeepSeek-style MTP head (REST after "layers.N."; glm4moe, GLM-4.7-Flash):
// eh_proj [hidden, 2 * hidden], enorm / hnorm / shared_head.norm [hidden], embed_tokens /
// shared_head.head [vocab, hidden] in an MTP layer (`mtp`), a shape no source has in another;
// nullopt for names it does not hold.
std::optional<std::vector<int64_t>> ref_nextn_head_shape(const RefConfig& c, std::string_view rest,
                                                         bool mtp);

// The record whose gguf_arch or model_types name model_type, in the list's order; nullptr when
// verify knows no such architecture.
const RefArch* find_ref_arch(std::string_view model_type);

// The record config.json selects: a `selects` hook first, then find_ref_arch(model_type).
const RefArch* select_ref_arch(const nlohmann::json& root, std::string_view model_type);

}  // namespace rebox::verify_ref
