// modernbert (answerdotai/ModernBERT-*, nomic-ai/modernbert-embed-base, gte-modernbert-base,
// granite-embedding-r2; config model_type modernbert): llama.cpp's modern-bert graph
// (docs/architectures.md "modernbert"). A pre-LayerNorm encoder without biases: the fused Wqkv
// kept fused as attn_qkv (q | k | v row blocks), NEOX rope (no row permutation) with a global
// theta on every global_attn_every_n_layers-th layer and a local one on the sliding-window layers,
// the GLU pair Wi kept fused as ffn_up (input rows, then gate rows: ggml's geglu order), layer 0
// without attn_norm (Identity in Hugging Face, optional in llama.cpp), final_norm as output_norm.
// Every tensor is a rename. The masked-LM head (head.*, decoder.*) is left out of the embedder;
// a reranker (ModernBertForSequenceClassification) keeps head.dense / head.norm / classifier as
// cls / cls.norm / cls.output for llama.cpp's RANK pooling (mean -> cls -> GELU -> cls.norm ->
// cls.output), which config.json's classifier_* fields must agree with. config.json's ModernBERT
// names (global_rope_theta, local_attention, norm_eps, ...) become the names read_model_config
// reads, in llama.cpp's converter's reading (ModernBertModel -> BertModel -> TextModel).
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace modernbert_record {

using nlohmann::json;

constexpr std::string_view kModelTypes[] = {"modernbert"};

// A LayerNorm without bias [E] (ModernBERT's norm_bias false), optional where Hugging Face may
// use an Identity (layer 0's attn_norm).
constexpr TensorSpec norm(std::string_view hf, std::string_view gguf,
                          Presence weight = Presence::required) {
    return {hf, gguf, weight, Presence::absent, 1, {Dim::hidden}};
}
// A Linear without bias (ne {in, out}); attention_bias / mlp_bias are refused below.
constexpr TensorSpec linear(std::string_view hf, std::string_view gguf, Dim in, Dim out) {
    return {hf, gguf, Presence::required, Presence::absent, 2, {in, out}};
}

constexpr TensorSpec kFirst[] = {
    linear("embeddings.tok_embeddings", "token_embd", Dim::hidden, Dim::vocab),
    norm("embeddings.norm", "token_embd_norm"),
};
constexpr TensorSpec kLayer[] = {
    norm("attn_norm", "attn_norm", Presence::optional),
    linear("attn.Wqkv", "attn_qkv", Dim::hidden, Dim::qkv_width),
    linear("attn.Wo", "attn_output", Dim::hidden, Dim::hidden),
    norm("mlp_norm", "ffn_norm"),
    linear("mlp.Wi", "ffn_up", Dim::hidden, Dim::ffn_x2),
    linear("mlp.Wo", "ffn_down", Dim::ffn, Dim::hidden),
};
constexpr TensorSpec kLast[] = {
    norm("final_norm", "output_norm"),
    // ModernBertForSequenceClassification's head (ModernBertPredictionHead, then the classifier):
    // dense and norm kept only next to a classifier (the masked-LM head has the same two).
    reranker_dense("head.dense", Presence::absent),
    {"head.norm",
     "cls.norm",
     Presence::optional,
     Presence::absent,
     1,
     {Dim::hidden},
     RowTransform::none,
     SourceRole::reranker_pooler},
    reranker_output("classifier"),
};
// TextModel.set_gguf_parameters (global_rope_theta as rope.freq_base, local_rope_theta as
// rope.freq_base_swa, norm_eps as the RMS epsilon), BertModel's causal flag, then
// ModernBertModel's own: sliding window, its pattern, rope scaling none, vocab_size, the
// activation. layer_norm_epsilon is not the converter's: llama.cpp's modern-bert loader requires
// it (norm_eps), and refuses the converter's file without it.
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,
    ArchKv::context_length,
    ArchKv::embedding_length,
    ArchKv::feed_forward_length,
    ArchKv::head_count,
    ArchKv::rope_freq_base,
    ArchKv::rope_freq_base_swa,
    ArchKv::rms_epsilon,
    ArchKv::layer_norm_epsilon,
    ArchKv::causal_false,
    ArchKv::sliding_window_or_zero,
    ArchKv::sliding_window_pattern,
    ArchKv::rope_scaling_type_none,
    ArchKv::vocab_size,
    ArchKv::hidden_activation,
};
// ModernBertForMaskedLM's decoder bias: not part of the embedder (its head.dense / head.norm are
// left out by their role, without a classifier).
constexpr std::string_view kLeftOut[] = {"decoder."};

[[noreturn]] void refuse(const std::string& field, const std::string& what,
                         const std::string& expected) {
    throw_input_error("config.json", field, what, expected);
}

// ModernBertModel's config.json names as read_model_config reads them, and what llama.cpp's
// modern-bert graph cannot compute, refused.
void prepare_modernbert_config(json& root) {
    // A reranker: llama.cpp's RANK pooling for modern-bert is mean -> head.dense -> GELU ->
    // head.norm -> classifier, with no head bias.
    bool reranker = false;
    if (const auto archs = root.find("architectures"); archs != root.end() && archs->is_array())
        for (const json& name : *archs)
            reranker |=
                name.is_string() && name.get<std::string>().ends_with("ForSequenceClassification");
    if (reranker) {
        if (root.value("classifier_pooling", json("cls")) != "mean")
            refuse("classifier_pooling",
                   "is " + root.value("classifier_pooling", json("cls (the default)")).dump(),
                   "\"mean\" (llama.cpp's modern-bert reranker pools by the mean)");
        if (root.value("classifier_activation", json("gelu")) != "gelu")
            refuse("classifier_activation", "is " + root["classifier_activation"].dump(),
                   "\"gelu\" (llama.cpp's modern-bert reranker head applies GELU)");
        if (root.value("classifier_bias", json(false)) != false)
            refuse("classifier_bias", "is " + root["classifier_bias"].dump(),
                   "false (llama.cpp's modern-bert reranker head has no dense bias)");
    }
    for (const char* field : {"attention_bias", "mlp_bias", "norm_bias"})
        if (const auto it = root.find(field); it != root.end() && *it != false)
            refuse(field, "is " + it->dump(),
                   "false (llama.cpp's modern-bert graph has no biases)");
    if (const auto act = root.find("hidden_activation"); act != root.end()) {
        if (*act != "gelu" && *act != "silu")
            refuse("hidden_activation", "is " + act->dump(),
                   "\"gelu\" (GeGLU) or \"silu\" (SwiGLU), the GLUs llama.cpp's modern-bert "
                   "graph computes");
    }
    // ModernBertModel writes rope.scaling.type "none" whatever config.json says.
    if (const auto scaling = root.find("rope_scaling");
        scaling != root.end() && !scaling->is_null()) {
        const json type = scaling->is_object()
                              ? scaling->value("rope_type", scaling->value("type", json()))
                              : json();
        if (type != "default")
            refuse("rope_scaling", "is " + scaling->dump(),
                   "null or type default (llama.cpp's converter writes modern-bert rope scaling "
                   "none)");
    }
    const auto window = root.find("local_attention");
    if (window == root.end() || !window->is_number_unsigned() || *window == 0)
        refuse("local_attention", window == root.end() ? "missing" : "is " + window->dump(),
               "the sliding-window size (ModernBERT: 128)");
    root["sliding_window"] = *window;
    if (const auto every = root.find("global_attn_every_n_layers");
        every != root.end() && !every->is_null()) {
        if (!every->is_number_unsigned() || *every == 0)
            refuse("global_attn_every_n_layers", "is " + every->dump(),
                   "a positive layer count (ModernBERT: 3)");
        root["sliding_window_pattern"] = *every;
    }
    if (const auto theta = root.find("global_rope_theta"); theta != root.end())
        root["rope_theta"] = *theta;
    // TextModel: norm_eps is the RMS epsilon's name; llama.cpp's LayerNorm reads the other.
    if (const auto eps = root.find("norm_eps"); eps != root.end() && !eps->is_null()) {
        root["rms_norm_eps"] = *eps;
        if (!root.contains("layer_norm_eps")) root["layer_norm_eps"] = *eps;
    } else {
        refuse("norm_eps", "missing", "the LayerNorm epsilon (ModernBERT: 1e-05)");
    }
}

constexpr Architecture kModernBert = [] {
    Architecture a{"modern-bert", kModelTypes, kFirst, kLayer, kLast, kKvs, {}, kLeftOut};
    a.encoder = true;
    a.byte_level_pre = "modern-bert";
    a.converter_buffers = kBertModelBuffers;  // ModernBertModel derives from BertModel
    a.prepare_config = prepare_modernbert_config;
    return a;
}();

}  // namespace modernbert_record

const Architecture& modernbert_architecture() { return modernbert_record::kModernBert; }

}  // namespace rebox::arch::detail
