// gemma-embedding (EmbeddingGemma, google/embeddinggemma-300m: config model_type gemma3_text with
// architectures ["Gemma3TextModel"], which claims_config turns into this GGUF arch name):
// llama.cpp's gemma-embedding graph (docs/architectures.md "gemma-embedding"). The Gemma 3 text
// tensors as gemma3 writes them (every RMSNorm weight + 1 in F32, token_embd cut to vocab_size
// rows), then the sentence-transformers Dense modules as EmbeddingGemma.generate_extra_tensors
// writes them: 2_Dense/model.safetensors linear.weight -> dense_2.weight and 3_Dense's ->
// dense_3.weight, [out, in] as stored (ne {in, out}: the orientation llama.cpp's loader asks).
// KVs: Gemma3Model's, attention.sliding_window always (from config.json as written: the HF class
// rewrites it), the Dense feature sizes, and a pooling type, which must be known. The bidirectional
// attention and the sliding-window period 6 are what llama.cpp's graph hard-codes: a config.json
// asking for something else is refused.
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace gemma_embedding_record {

using nlohmann::json;

constexpr const auto& kFirst = kGemma3First;
constexpr const auto& kLayer = kGemma3Layer;
// The Dense modules: ne {in, out} of a [out, in] Linear weight, no bias (the converter keeps only
// ".weight" tensors; st_dense refuses a module with a bias).
constexpr TensorSpec kLast[] = {
    kGemmaOutputNorm,
    output_row(),
    {.hf = "2_Dense.linear",
     .gguf = "dense_2",
     .weight = Presence::optional,
     .rank = 2,
     .ne = {Dim::hidden, Dim::dense_2_out}},
    {.hf = "3_Dense.linear",
     .gguf = "dense_3",
     .weight = Presence::optional,
     .rank = 2,
     .ne = {Dim::dense_3_in, Dim::hidden}},
};
// TextModel.set_gguf_parameters, Gemma3Model's additions, then EmbeddingGemma's (sliding_window
// from config.json as written, the Dense feature sizes); the pooling type follows.
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,
    ArchKv::context_length,
    ArchKv::embedding_length,
    ArchKv::feed_forward_length,
    ArchKv::head_count,
    ArchKv::head_count_kv,
    ArchKv::rope_freq_base,
    ArchKv::rope_freq_base_swa,
    ArchKv::rms_epsilon,
    ArchKv::key_length,
    ArchKv::value_length,
    ArchKv::final_logit_softcapping,
    ArchKv::sliding_window_required,
    ArchKv::dense_2_feat_in,
    ArchKv::dense_2_feat_out,
    ArchKv::dense_3_feat_in,
    ArchKv::dense_3_feat_out,
};
// Gemma3TextConfig's defaults, except sliding_window: EmbeddingGemma reads it from config.json
// itself and raises when it is missing.
constexpr ConfigDefault kDefaults[] = {
    {"vocab_size", "262208"},
    {"num_attention_heads", "8"},
    {"num_key_value_heads", "4"},
    {"head_dim", "256"},
    {"max_position_embeddings", "131072"},
    {"rms_norm_eps", "1e-06"},
    {"rope_theta", "1000000.0"},
    {"rope_local_base_freq", "10000.0"},
    {"sliding_window_pattern", "6"},
    {"tie_word_embeddings", "true"},
};

[[noreturn]] void refuse(const std::string& field, const std::string& what,
                         const std::string& expected) {
    throw_input_error("config.json", field, what, expected);
}

// convert_hf_to_gguf picks its class by architectures[0]: a gemma3_text config whose first
// architecture is Gemma3TextModel is EmbeddingGemma.
bool claims_embedding_gemma_config(const json& root) {
    const auto type = root.find("model_type");
    return type != root.end() && *type == "gemma3_text" &&
           first_architecture(root) == "Gemma3TextModel";
}

// What llama.cpp's gemma-embedding graph hard-codes, checked against config.json (after the
// defaults): a sliding_window (EmbeddingGemma.set_gguf_parameters raises without one),
// bidirectional attention (causal_attn is forced false), queries scaled by 1/sqrt(head_dim)
// (query_pre_attn_scalar = head_dim) and a sliding-window layer except every 6th.
void prepare_embedding_gemma_config(json& root) {
    const auto window = root.find("sliding_window");
    if (window == root.end() || !window->is_number_unsigned() || *window == 0)
        refuse("sliding_window", "missing or not a positive count",
               "the model's sliding window (EmbeddingGemma's converter requires it)");
    if (const auto bidi = root.find("use_bidirectional_attention");
        bidi != root.end() && *bidi != true)
        refuse("use_bidirectional_attention", "is " + bidi->dump(),
               "true: llama.cpp's gemma-embedding graph attends both ways (causal false)");
    const auto head_dim = root.find("head_dim");
    if (const auto scalar = root.find("query_pre_attn_scalar");
        scalar != root.end() && !scalar->is_null() && head_dim != root.end() &&
        head_dim->is_number() &&
        (!scalar->is_number() || scalar->get<double>() != head_dim->get<double>()))
        refuse("query_pre_attn_scalar", "is " + scalar->dump() + ", not head_dim",
               head_dim->dump() + ": llama.cpp scales queries by 1/sqrt(head_dim)");
    if (const auto pattern = root.find("sliding_window_pattern");
        pattern != root.end() && !pattern->is_null() && *pattern != 6)
        refuse("sliding_window_pattern", "is " + pattern->dump(),
               "6: llama.cpp's gemma-embedding graph hard-codes that period");
    const auto types = root.find("layer_types");
    if (types == root.end() || types->is_null()) return;
    if (!types->is_array()) refuse("layer_types", "not an array", "an array of strings");
    for (size_t i = 0; i < types->size(); ++i) {
        const char* want = (i + 1) % 6 == 0 ? "full_attention" : "sliding_attention";
        if ((*types)[i] != want)
            refuse("layer_types[" + std::to_string(i) + "]", "is " + (*types)[i].dump(),
                   std::string(want) +
                       ": llama.cpp's gemma-embedding graph makes every 6th "
                       "layer global");
    }
}

// The Dense modules: llama.cpp's loader asserts dense_2_feat_in and dense_3_feat_out equal
// n_embd, and dense_3 reads what dense_2 gives.
void dense_problems(const Architecture&, const ModelConfig& config,
                    std::vector<std::string>& problems) {
    const std::string hidden = "hidden_size " + std::to_string(config.hidden_size);
    const auto origin = [](const ModelConfig::DenseFeatures& d, const char* fallback) {
        return d.origin.empty() ? std::string(fallback) : d.origin;
    };
    if (config.dense_2 && config.dense_2->in != config.hidden_size)
        problems.push_back(origin(*config.dense_2, "2_Dense/config.json") + " in_features " +
                           std::to_string(config.dense_2->in) + " is not " + hidden +
                           " (the Dense module projects the pooled state)");
    if (config.dense_3 && config.dense_3->out != config.hidden_size)
        problems.push_back(origin(*config.dense_3, "3_Dense/config.json") + " out_features " +
                           std::to_string(config.dense_3->out) + " is not " + hidden +
                           " (llama.cpp's gemma-embedding loader requires it)");
    if (config.dense_3 &&
        config.dense_3->in != (config.dense_2 ? config.dense_2->out : config.hidden_size))
        problems.push_back(origin(*config.dense_3, "3_Dense/config.json") + " in_features " +
                           std::to_string(config.dense_3->in) + " is not what it is given: " +
                           (config.dense_2
                                ? "2_Dense's out_features " + std::to_string(config.dense_2->out)
                                : hidden));
}

constexpr Architecture kGemmaEmbedding{
    .gguf_arch = "gemma-embedding",
    .model_types = {},  // claimed by architectures[0] (claims_config), not by model_type
    .model_first = kFirst,
    .layer = kLayer,
    .model_last = kLast,
    .kvs = kKvs,
    .extras = {},
    .config_defaults = kDefaults,
    .sentence_embedder = true,
    .claims_config = claims_embedding_gemma_config,
    .prepare_config = prepare_embedding_gemma_config,
    .config_checks = dense_problems,
};

}  // namespace gemma_embedding_record

const Architecture& gemma_embedding_architecture() {
    return gemma_embedding_record::kGemmaEmbedding;
}

}  // namespace rebox::arch::detail
