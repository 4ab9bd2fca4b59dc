// xlm-roberta (XLMRobertaModel embedders such as bge-m3 / multilingual-e5-base/large, and
// XLMRobertaForSequenceClassification rerankers such as bge-reranker-v2-m3): llama.cpp's bert
// graph, as its converter's XLMRobertaModel writes it (docs/architectures.md "xlm-roberta").
// The layers are bert's; the differences are the "roberta." head prefix, the position table
// without its first pad_token_id + 1 rows (RoBERTa numbers positions from there; an exact row
// slice, context_length shortened to match), the pooler always left out (an XLMRobertaModel's
// pooler is unused by sentence-transformers, a classification checkpoint has none), and the
// RoBERTa classification head: classifier.dense -> cls, classifier.out_proj -> cls.output, which
// llama.cpp's RANK pooling computes as out_proj(tanh(dense(CLS))), exactly Hugging Face's head.
#include <nlohmann/json.hpp>
#include <string>

#include "arch_tables.hpp"
#include "rebox/error.hpp"

namespace rebox::arch::detail {
namespace xlm_roberta_record {

constexpr std::string_view kModelTypes[] = {"xlm-roberta"};

constexpr TensorSpec kFirst[] = {
    {"embeddings.word_embeddings",
     "token_embd",
     Presence::required,
     Presence::absent,
     2,
     {Dim::hidden, Dim::vocab}},
    {"embeddings.position_embeddings",
     "position_embd",
     Presence::required,
     Presence::absent,
     2,
     {Dim::hidden, Dim::positions},
     RowTransform::skip_position_offset,
     SourceRole::table_f32},
    exact_f32_row("embeddings.token_type_embeddings", "token_types", Dim::token_types,
                  SourceRole::table_f32),
    {"embeddings.LayerNorm",
     "token_embd_norm",
     Presence::required,
     Presence::required,
     1,
     {Dim::hidden}},
};
constexpr TensorSpec kLast[] = {reranker_dense("classifier.dense"),
                                reranker_output("classifier.out_proj")};
// BertModel.filter_tensors drops the pooler (and the position ids buffer: kBertModelBuffers);
// the masked-LM head (lm_head) has no GGUF tensor.
constexpr std::string_view kLeftOut[] = {"pooler.", "lm_head."};
// transformers' XLMRobertaConfig defaults.
constexpr ConfigDefault kDefaults[] = {
    {"layer_norm_eps", "1e-12"},
    {"type_vocab_size", "2"},
    {"max_position_embeddings", "512"},
    {"pad_token_id", "1"},
};
constexpr std::string_view kHeadPrefixes[] = {"roberta."};

// RoBERTa position ids start at pad_token_id + 1: XLMRobertaModel leaves the table's first
// pad_token_id + 1 rows out and subtracts them from context_length.
void read_position_offset(const nlohmann::json& root, ModelConfig& config) {
    const std::optional<uint32_t> pad = config_token_id(root, "pad_token_id");
    if (!pad)
        throw_input_error("config.json", "pad_token_id",
                          "missing (RoBERTa position ids start at pad_token_id + 1)");
    config.position_offset = *pad + 1;
    if (config.max_position_embeddings <= config.position_offset)
        throw_input_error("config.json", "max_position_embeddings",
                          std::to_string(config.max_position_embeddings) +
                              " leaves no position after the first pad_token_id + 1 = " +
                              std::to_string(config.position_offset));
}

}  // namespace xlm_roberta_record

const Architecture& xlm_roberta_architecture() {
    using namespace xlm_roberta_record;
    static const Architecture kXlmRoberta{.gguf_arch = "bert",
                                          .model_types = kModelTypes,
                                          .model_first = kFirst,
                                          .layer = bert_layer_rows(),
                                          .model_last = kLast,
                                          .kvs = bert_kvs(),
                                          .extras = {},
                                          .left_out_prefixes = kLeftOut,
                                          .config_defaults = kDefaults,
                                          .hf_layer_prefix = "encoder.layer.",
                                          .hf_head_prefixes = kHeadPrefixes,
                                          .encoder = true,
                                          .converter_buffers = kBertModelBuffers,
                                          .finish_config = read_position_offset};
    return kXlmRoberta;
}

}  // namespace rebox::arch::detail
