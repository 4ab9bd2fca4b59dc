// The per-architecture tables (one .cpp each) the registry lists, and the table rows, row groups
// and KV lists several architectures share, so that each architecture's file states only what
// differs: the dense decoder's attention and feed-forward rows (with or without biases, llama's
// rope row permutation), the MoE router and stacked experts, gemma's weight + 1 norms, and the
// hyper-parameter KVs every llama-like converter writes.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

#include "arch/architecture.hpp"

namespace rebox::arch::detail {

const Architecture& qwen3_architecture();
const Architecture& qwen2_architecture();
const Architecture& qwen2vl_architecture();
const Architecture& qwen3vl_architecture();
const Architecture& qwen3vlmoe_architecture();
const Architecture& llama_architecture();
const Architecture& qwen3_moe_architecture();
const Architecture& qwen2_moe_architecture();
const Architecture& mixtral_architecture();
const Architecture& phi3_architecture();
const Architecture& gemma_architecture();
const Architecture& gemma2_architecture();
const Architecture& gemma3_architecture();
const Architecture& gemma_embedding_architecture();
const Architecture& bert_architecture();
const Architecture& nomic_bert_architecture();
const Architecture& modernbert_architecture();
const Architecture& seed_oss_architecture();
const Architecture& olmo2_architecture();
const Architecture& smollm3_architecture();
const Architecture& mistral3_architecture();
const Architecture& apertus_architecture();
const Architecture& qwen35_architecture();
const Architecture& qwen35moe_architecture();
const Architecture& qwen3next_architecture();
const Architecture& glm4moe_architecture();
const Architecture& gemma4_architecture();
const Architecture& deepseek2_architecture();
const Architecture& glm4_moe_lite_architecture();
const Architecture& gpt_oss_architecture();
const Architecture& xlm_roberta_architecture();
const Architecture& nemotron_h_architecture();
const Architecture& nemotron_h_moe_architecture();
// The Qwen VL text models' M-RoPE (qwen2vl.cpp): TextModel's rope parameters (rope_parameters,
// else rope_scaling) and ModelConfig::rope_sections from their mrope_section, padded to 4.
const char* mrope_block_name(const nlohmann::json& root);
void read_mrope_sections(const nlohmann::json& root, ModelConfig& config);
// bert's per-layer rows and KV list, which xlm-roberta shares (bert.cpp).
std::span<const TensorSpec> bert_layer_rows();
std::span<const ArchKv> bert_kvs();
// The buffer BertModel.filter_tensors drops, for it and every converter class derived from it
// (XLMRobertaModel, NomicBertModel, ModernBertModel): Architecture::converter_buffers.
inline constexpr std::string_view kBertModelBuffers[] = {"embeddings.position_ids"};

// config.json's field `name`, null when absent or null.
const nlohmann::json* config_field(const nlohmann::json& root, const char* name);
// config.json's architectures[0] (the class llama.cpp's converter picks by), "" when there is no
// such string.
std::string_view first_architecture(const nlohmann::json& root);
// A whole number of config.json from `low` to `cap` (an input error otherwise); nullopt when absent
// or null.
std::optional<uint32_t> config_count(const nlohmann::json& root, const char* name, uint32_t low,
                                     uint32_t cap);
// The routed expert count as n_routed_experts (the glm4moe and deepseek2 classes stack that many
// experts and write it as expert_count) moved to num_experts, where the common reading takes it;
// missing: an input error expecting `expected` (deepseek_moe.cpp).
void take_routed_experts(nlohmann::json& root, const char* expected);
// DeepSeek-style routing (glm4moe, deepseek2; deepseek_moe.cpp), as the converter reads it:
// n_shared_experts, first_k_dense_replace, n_group, topk_group, routed_scaling_factor and
// norm_topk_prob into `config` as config.json gives them; returns the score function named by the
// first of TextModel's keys config.json has (empty: none; an input error when it is not sigmoid,
// softmax or sqrtsoftplus, which the converter raises for).
std::string read_moe_routing(const nlohmann::json& root, ModelConfig& config);

// The parts one after another, as one array (a table or KV list built from shared groups).
template <typename T, std::size_t... N>
constexpr std::array<T, (N + ...)> join(const std::array<T, N>&... parts) {
    std::array<T, (N + ...)> out{};
    std::size_t at = 0;
    ((std::copy(parts.begin(), parts.end(), out.begin() + at), at += N), ...);
    return out;
}

// --- Rows before and after the layers ------------------------------------------------------------

// token_embd.weight [E, V]: before the layers.
inline constexpr TensorSpec kTokenEmbd{
    "embed_tokens",           "token_embd", Presence::required, Presence::absent, 2,
    {Dim::hidden, Dim::vocab}};
// output_norm.weight [E].
inline constexpr TensorSpec kOutputNorm{"norm", "output_norm", Presence::required, Presence::absent,
                                        1,      {Dim::hidden}};
// output.weight [E, V], left out when tie_word_embeddings (`weight` and `bias` say otherwise where
// a loader differs).
constexpr TensorSpec output_row(Presence weight = Presence::required_unless_tied,
                                Presence bias = Presence::absent) {
    return {"lm_head", "output", weight, bias, 2, {Dim::hidden, Dim::vocab}};
}

// --- Dense decoder layer rows --------------------------------------------------------------------

// attn_norm / ffn_norm [E] (input_layernorm / post_attention_layernorm).
inline constexpr TensorSpec kAttnNorm{"input_layernorm", "attn_norm", Presence::required,
                                      Presence::absent,  1,           {Dim::hidden}};
inline constexpr TensorSpec kFfnNorm{"post_attention_layernorm", "ffn_norm", Presence::required,
                                     Presence::absent,           1,          {Dim::hidden}};
// The same HF norm where gguf-py's tensor list for the family has ATTN_POST_NORM and no FFN_NORM
// (seed_oss, olmo2): post_attention_norm [E].
inline constexpr TensorSpec kPostAttentionNorm{"post_attention_layernorm",
                                               "post_attention_norm",
                                               Presence::required,
                                               Presence::absent,
                                               1,
                                               {Dim::hidden}};

// q/k/v/o projections with the bias a loader takes and the row transform the rope needs.
constexpr TensorSpec attn_q(Presence bias = Presence::absent,
                            RowTransform rows = RowTransform::none) {
    return {"self_attn.q_proj",          "attn_q", Presence::required, bias, 2,
            {Dim::hidden, Dim::q_width}, rows};
}
constexpr TensorSpec attn_k(Presence bias = Presence::absent,
                            RowTransform rows = RowTransform::none) {
    return {"self_attn.k_proj",           "attn_k", Presence::required, bias, 2,
            {Dim::hidden, Dim::kv_width}, rows};
}
constexpr TensorSpec attn_v(Presence bias = Presence::absent) {
    return {"self_attn.v_proj",          "attn_v", Presence::required, bias, 2,
            {Dim::hidden, Dim::kv_width}};
}
constexpr TensorSpec attn_output(Presence bias = Presence::absent) {
    return {"self_attn.o_proj",         "attn_output", Presence::required, bias, 2,
            {Dim::q_width, Dim::hidden}};
}
// Per-head q/k RMSNorms [head_dim] (qwen3, gemma3), with the value transform a family applies.
constexpr TensorSpec head_norm(std::string_view hf, std::string_view gguf, ValueTransform values) {
    return {hf,
            gguf,
            Presence::required,
            Presence::absent,
            1,
            {Dim::head_dim},
            RowTransform::none,
            SourceRole::plain,
            {},
            values};
}
constexpr TensorSpec attn_q_norm(ValueTransform values = ValueTransform::none) {
    return head_norm("self_attn.q_norm", "attn_q_norm", values);
}
constexpr TensorSpec attn_k_norm(ValueTransform values = ValueTransform::none) {
    return head_norm("self_attn.k_norm", "attn_k_norm", values);
}

// The gated feed-forward: ffn_gate, ffn_up [E, F], ffn_down [F, E].
constexpr std::array<TensorSpec, 3> dense_ffn(Presence bias = Presence::absent) {
    return {{{"mlp.gate_proj", "ffn_gate", Presence::required, bias, 2, {Dim::hidden, Dim::ffn}},
             {"mlp.up_proj", "ffn_up", Presence::required, bias, 2, {Dim::hidden, Dim::ffn}},
             {"mlp.down_proj", "ffn_down", Presence::required, bias, 2, {Dim::ffn, Dim::hidden}}}};
}

// qwen3's attention (qwen3, qwen3_moe): per-head q/k norms, no biases, NEOX rope; then ffn_norm.
inline constexpr std::array kQwen3Attention{
    kAttnNorm, attn_q(), attn_k(), attn_v(), attn_output(), attn_q_norm(), attn_k_norm(), kFfnNorm,
};
// qwen2's attention (qwen2, qwen2_moe): optional q/k/v biases, NEOX rope; then ffn_norm.
inline constexpr std::array kQwen2Attention{
    kAttnNorm,
    attn_q(Presence::optional),
    attn_k(Presence::optional),
    attn_v(Presence::optional),
    attn_output(),
    kFfnNorm,
};
// llama's attention (llama, mixtral; llama.cpp's llama loader): optional biases on q/k/v/o and
// the q/k rope row permutation (LlamaModel.permute); then ffn_norm.
inline constexpr std::array kLlamaAttention{
    kAttnNorm,
    attn_q(Presence::optional, RowTransform::rope_pairs_q_heads),
    attn_k(Presence::optional, RowTransform::rope_pairs_kv_heads),
    attn_v(Presence::optional),
    attn_output(Presence::optional),
    kFfnNorm,
};

// --- Mixture of experts --------------------------------------------------------------------------

// A required [E, rows] matrix without bias whose role writes it exact F32 (router_f32, table_f32).
constexpr TensorSpec exact_f32_row(std::string_view hf, std::string_view gguf, Dim rows,
                                   SourceRole role) {
    return {
        hf,  gguf, Presence::required, Presence::absent, 2, {Dim::hidden, rows}, RowTransform::none,
        role};
}
// A reranker head's dense layer `cls` [E, E] (the BERT pooler, RoBERTa's classifier.dense,
// ModernBERT's head.dense; kept only next to a classifier) and its output rows `cls.output`
// [E, labels]; `bias` for the dense layer's (ModernBERT's has none).
constexpr TensorSpec reranker_dense(std::string_view hf, Presence bias = Presence::optional) {
    return {hf,
            "cls",
            Presence::optional,
            bias,
            2,
            {Dim::hidden, Dim::hidden},
            RowTransform::none,
            SourceRole::reranker_pooler};
}
constexpr TensorSpec reranker_output(std::string_view hf) {
    return {hf,
            "cls.output",
            Presence::optional,
            Presence::optional,
            2,
            {Dim::hidden, Dim::labels},
            RowTransform::none,
            SourceRole::classifier};
}
// The router ffn_gate_inp [E, experts] (or a [E, 1] shared-expert gate): always exact F32.
constexpr TensorSpec router_row(std::string_view hf, std::string_view gguf,
                                Dim rows = Dim::experts) {
    return exact_f32_row(hf, gguf, rows, SourceRole::router_f32);
}
// One stacked-experts tensor: per-expert source stems `hf` ("{e}" = index) or the MLX pre-stacked
// `stacked`; `down` for ffn_down_exps ([F_e, E, experts]), else gate/up ([E, F_e, experts]).
constexpr TensorSpec experts_row(std::string_view hf, std::string_view gguf,
                                 std::string_view stacked, bool down) {
    return {hf,
            gguf,
            Presence::required,
            Presence::absent,
            3,
            down ? std::array{Dim::expert_ffn, Dim::hidden, Dim::experts}
                 : std::array{Dim::hidden, Dim::expert_ffn, Dim::experts},
            RowTransform::none,
            SourceRole::experts,
            stacked};
}
// The qwen MoE block (qwen2_moe, qwen3_moe): mlp.gate and mlp.experts.{e}.{gate,down,up}_proj
// (MLX: mlp.switch_mlp.*), in llama.cpp's output order.
inline constexpr std::array kQwenMoeFfn{
    router_row("mlp.gate", "ffn_gate_inp"),
    experts_row("mlp.experts.{e}.gate_proj", "ffn_gate_exps", "mlp.switch_mlp.gate_proj", false),
    experts_row("mlp.experts.{e}.down_proj", "ffn_down_exps", "mlp.switch_mlp.down_proj", true),
    experts_row("mlp.experts.{e}.up_proj", "ffn_up_exps", "mlp.switch_mlp.up_proj", false),
};
// The qwen shared expert (qwen2_moe, qwen35moe): its sigmoid gate ffn_gate_inp_shexp (HF
// [1, hidden] -> ne {hidden, 1}, exact F32) and ffn_{gate,down,up}_shexp.
inline constexpr std::array kQwenSharedExpert{
    router_row("mlp.shared_expert_gate", "ffn_gate_inp_shexp", Dim::one),
    TensorSpec{"mlp.shared_expert.gate_proj",
               "ffn_gate_shexp",
               Presence::required,
               Presence::absent,
               2,
               {Dim::hidden, Dim::shared_ffn}},
    TensorSpec{"mlp.shared_expert.down_proj",
               "ffn_down_shexp",
               Presence::required,
               Presence::absent,
               2,
               {Dim::shared_ffn, Dim::hidden}},
    TensorSpec{"mlp.shared_expert.up_proj",
               "ffn_up_shexp",
               Presence::required,
               Presence::absent,
               2,
               {Dim::hidden, Dim::shared_ffn}},
};

// The DeepSeek-style MoE block (glm4moe, deepseek2) on the layers `kinds` say: the router, its
// score-correction bias mlp.gate.e_score_correction_bias [experts] -> exp_probs_b.bias (exact
// F32; `bias` says whether the family requires it), the stacked experts, and the
// n_shared_experts shared experts fused into ffn_{gate,down,up}_shexp.
constexpr std::array<TensorSpec, 8> deepseek_moe_ffn(uint8_t kinds, Presence bias) {
    auto on = [kinds](TensorSpec spec) {
        spec.kinds = kinds;
        return spec;
    };
    auto shared = [&on](std::string_view hf, std::string_view gguf, Dim columns, Dim rows) {
        return on({hf, gguf, Presence::required, Presence::absent, 2, {columns, rows}});
    };
    TensorSpec score_bias = on({"mlp.gate.e_score_correction_bias",
                                "exp_probs_b.bias",
                                bias,
                                Presence::absent,
                                1,
                                {Dim::experts}});
    score_bias.role = SourceRole::router_f32;
    score_bias.bare = true;  // the names as they are: no ".weight"
    return {{on(kQwenMoeFfn[0]), score_bias, on(kQwenMoeFfn[1]), on(kQwenMoeFfn[2]),
             on(kQwenMoeFfn[3]),
             shared("mlp.shared_experts.gate_proj", "ffn_gate_shexp", Dim::hidden,
                    Dim::shared_experts_ffn),
             shared("mlp.shared_experts.down_proj", "ffn_down_shexp", Dim::shared_experts_ffn,
                    Dim::hidden),
             shared("mlp.shared_experts.up_proj", "ffn_up_shexp", Dim::hidden,
                    Dim::shared_experts_ffn)}};
}

// --- Multi-token prediction ----------------------------------------------------------------------

// The head of a DeepSeek-style MTP layer (glm4moe; deepseek2 as Glm4MoeLiteModel writes it), on
// the layers `kinds` say: eh_proj [2E, E], embed_tokens [E, V] (optional), enorm / hnorm [E],
// shared_head.head [E, V] and shared_head.norm [E] (optional), written as nextn.*. The required
// ones are required once the MTP layer is there at all (Architecture::mtp_probe).
constexpr std::array<TensorSpec, 6> nextn_head(uint8_t kinds) {
    auto row = [kinds](std::string_view hf, std::string_view gguf, Presence weight, uint8_t rank,
                       Dim columns, Dim rows) {
        TensorSpec spec{hf, gguf, weight, Presence::absent, rank, {columns, rows}};
        spec.kinds = kinds;
        return spec;
    };
    using enum Presence;
    return {
        {row("eh_proj", "nextn.eh_proj", required, 2, Dim::hidden_x2, Dim::hidden),
         row("embed_tokens", "nextn.embed_tokens", optional, 2, Dim::hidden, Dim::vocab),
         row("enorm", "nextn.enorm", required, 1, Dim::hidden, {}),
         row("hnorm", "nextn.hnorm", required, 1, Dim::hidden, {}),
         row("shared_head.head", "nextn.shared_head_head", optional, 2, Dim::hidden, Dim::vocab),
         row("shared_head.norm", "nextn.shared_head_norm", optional, 1, Dim::hidden, {})}};
}
// _set_vocab_glm (glm4moe, and GLM-4.7-Flash's deepseek2): GLM's byte-level BPE vocabulary, its
// pre-tokenizer named "glm4", and bos / eot / unk / eom from [gMASK] / <|user|> / <|endoftext|>
// / <|observation|> (glm4moe.cpp). Architecture::finish_vocab.
void glm_vocab(TokenizerVocab& vocab, bool pre_given);

// --- gemma family
// ---------------------------------------------------------------------------------

// A gemma RMSNorm [E]: written as weight + 1 in F32 (docs/architectures.md "gemma").
constexpr TensorSpec gemma_norm(std::string_view hf, std::string_view gguf) {
    return {hf,
            gguf,
            Presence::required,
            Presence::absent,
            1,
            {Dim::hidden},
            RowTransform::none,
            SourceRole::plain,
            {},
            ValueTransform::add_one};
}
// gemma's output_norm.weight [E].
inline constexpr TensorSpec kGemmaOutputNorm = gemma_norm("norm", "output_norm");
inline constexpr TensorSpec kGemmaAttnNorm = gemma_norm("input_layernorm", "attn_norm");
// gemma2 / gemma3: the feed-forward between four norms (post-attention, pre- and post-
// feed-forward), after attn_output.
inline constexpr std::array kGemma2Ffn =
    join(std::array{gemma_norm("post_attention_layernorm", "post_attention_norm"),
                    gemma_norm("pre_feedforward_layernorm", "ffn_norm")},
         dense_ffn(), std::array{gemma_norm("post_feedforward_layernorm", "post_ffw_norm")});
// gemma3 (and gemma-embedding, the same text model): token_embd keeps only the first vocab_size
// rows; q_norm / k_norm follow their projections and are written as weight + 1 too.
inline constexpr TensorSpec kGemma3First[] = {[] {
    TensorSpec row = kTokenEmbd;
    row.rows = RowTransform::first_vocab_rows;
    return row;
}()};
inline constexpr auto kGemma3Layer =
    join(std::array{kGemmaAttnNorm, attn_q(), attn_q_norm(ValueTransform::add_one), attn_k(),
                    attn_k_norm(ValueTransform::add_one), attn_v(), attn_output()},
         kGemma2Ffn);

// --- KVs -----------------------------------------------------------------------------------------

// TextModel.set_gguf_parameters' keys as the llama-like converters (qwen2, qwen3, llama and their
// MoE forms) write them, in order; each architecture appends its own.
inline constexpr std::array kDecoderKvs{
    ArchKv::context_length,      ArchKv::embedding_length,     ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,           ArchKv::head_count_kv,
    ArchKv::rope_freq_base,      ArchKv::rms_epsilon,          ArchKv::key_length,
    ArchKv::value_length,        ArchKv::rope_dimension_count,
};
// GemmaModel.set_gguf_parameters, in its order (no rope.freq_base); gemma2 appends its own.
inline constexpr std::array kGemmaKvs{
    ArchKv::context_length,      ArchKv::embedding_length, ArchKv::block_count,
    ArchKv::feed_forward_length, ArchKv::head_count,       ArchKv::head_count_kv,
    ArchKv::rms_epsilon,         ArchKv::key_length,       ArchKv::value_length,
};

}  // namespace rebox::arch::detail
