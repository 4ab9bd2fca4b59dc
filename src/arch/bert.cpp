// bert (BertModel embedders such as bge / all-MiniLM / e5, BertForMaskedLM, and
// BertForSequenceClassification cross-encoder rerankers): llama.cpp's bert graph
// (docs/architectures.md "bert"). Token, position and token-type embeddings with a LayerNorm,
// post-LayerNorm blocks with separate biased q/k/v, no rope, attention.causal false. Every
// tensor is a rename; the position and token-type tables are written exact F32. The masked-LM
// and next-sentence heads and the position_ids buffer are left out; the pooler is left out of an
// embedder (as llama.cpp's converter does) but kept as `cls` next to the classifier `cls.output`
// in a reranker, so that llama.cpp's RANK pooling computes classifier(tanh(pooler(CLS))) as
// Hugging Face does.
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace bert_record {

constexpr std::string_view kModelTypes[] = {"bert"};

// The position and token-type tables [E, rows]: exact F32.
constexpr TensorSpec table_row(std::string_view hf, std::string_view gguf, Dim rows) {
    return exact_f32_row(hf, gguf, rows, SourceRole::table_f32);
}
// A LayerNorm [E] with its bias.
constexpr TensorSpec layer_norm(std::string_view hf, std::string_view gguf) {
    return {hf, gguf, Presence::required, Presence::required, 1, {Dim::hidden}};
}
// A biased Linear (ne {in, out}).
constexpr TensorSpec linear(std::string_view hf, std::string_view gguf, Dim in, Dim out) {
    return {hf, gguf, Presence::required, Presence::required, 2, {in, out}};
}

constexpr TensorSpec kFirst[] = {
    {"embeddings.word_embeddings",
     "token_embd",
     Presence::required,
     Presence::absent,
     2,
     {Dim::hidden, Dim::vocab}},
    table_row("embeddings.position_embeddings", "position_embd", Dim::positions),
    table_row("embeddings.token_type_embeddings", "token_types", Dim::token_types),
    layer_norm("embeddings.LayerNorm", "token_embd_norm"),
};
constexpr TensorSpec kLayer[] = {
    linear("attention.self.query", "attn_q", Dim::hidden, Dim::q_width),
    linear("attention.self.key", "attn_k", Dim::hidden, Dim::kv_width),
    linear("attention.self.value", "attn_v", Dim::hidden, Dim::kv_width),
    linear("attention.output.dense", "attn_output", Dim::q_width, Dim::hidden),
    layer_norm("attention.output.LayerNorm", "attn_output_norm"),
    linear("intermediate.dense", "ffn_up", Dim::hidden, Dim::ffn),
    linear("output.dense", "ffn_down", Dim::ffn, Dim::hidden),
    layer_norm("output.LayerNorm", "layer_output_norm"),
};
constexpr TensorSpec kLast[] = {reranker_dense("pooler.dense"), reranker_output("classifier")};
// TextModel.set_gguf_parameters (no head_count_kv, rope or rms epsilon in a BERT config), then
// BertModel's causal flag.
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,         ArchKv::context_length, ArchKv::embedding_length,
    ArchKv::feed_forward_length, ArchKv::head_count,     ArchKv::layer_norm_epsilon,
    ArchKv::causal_false,
};
// BertModel.filter_tensors drops these (the masked-LM and next-sentence heads; its position ids
// buffer: kBertModelBuffers).
constexpr std::string_view kLeftOut[] = {"cls.predictions.", "cls.seq_relationship."};
// transformers' BertConfig defaults.
constexpr ConfigDefault kDefaults[] = {
    {"layer_norm_eps", "1e-12"},
    {"type_vocab_size", "2"},
    {"max_position_embeddings", "512"},
};
constexpr std::string_view kHeadPrefixes[] = {"bert."};

constexpr Architecture kBert = [] {
    Architecture a{"bert", kModelTypes, kFirst,    kLayer,           kLast,         kKvs,
                   {},     kLeftOut,    kDefaults, "encoder.layer.", kHeadPrefixes, true};
    a.converter_buffers = kBertModelBuffers;
    return a;
}();

}  // namespace bert_record

const Architecture& bert_architecture() { return bert_record::kBert; }

std::span<const TensorSpec> bert_layer_rows() { return bert_record::kLayer; }
std::span<const ArchKv> bert_kvs() { return bert_record::kKvs; }

}  // namespace rebox::arch::detail
