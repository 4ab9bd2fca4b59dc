// Tiny encoder checkpoints (--arch bert | xlm-roberta | nomic-bert) in the Hugging Face layouts of
// BertModel / BertForSequenceClassification, XLMRobertaModel / XLMRobertaForSequenceClassification
// and nomic-embed-text v1.5's NomicBertModel, with a real vocabulary (the tokenizer.json given),
// sentence-transformers pooling files, and the weights as float (--dtype), MLX (mlx-embeddings'
// layout) or mcq-v1.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "model_plan.hpp"

namespace mkfixture {

struct EncoderOptions {
    std::string arch;            // bert | xlm-roberta | nomic-bert
    std::string format = "mcq";  // mcq | mlx | float
    std::string dtype = "bf16";  // float: bf16 | f16 | f32
    std::string pooling;         // cls | mean | none; "" = the arch's usual (cls, cls, mean)
    bool reranker = false;       // bert / xlm-roberta: the *ForSequenceClassification head
    // The real tokenizer.json (WordPiece for bert / nomic-bert, Unigram for xlm-roberta);
    // tokenizer_config.json and sentencepiece.bpe.model are copied from beside it when present.
    std::filesystem::path tokenizer_json;
    int layers = 2;
    uint64_t seed = 1;
};

bool is_encoder_arch(const std::string& arch);

// The tensors of the checkpoint (quantized units are every 2-D weight: the tables, the linear
// layers and heads), for the given vocabulary size (the embedding's rows).
ModelPlan make_encoder_plan(const EncoderOptions& options, int64_t vocab);

// Writes an encoder plan's weights as mcq-v1 (format "mcq") or MLX (format "mlx", mlx-embeddings'
// layout: f16 scales and biases) into out_dir's model.safetensors.
void write_quantized_encoder_weights(const std::filesystem::path& out_dir, const ModelPlan& plan,
                                     const std::string& format, uint64_t seed);

// Writes the checkpoint into out_dir (which exists and holds no fixture files); returns a one-line
// summary. Throws std::runtime_error naming what is wrong with the options or the tokenizer.
std::string write_encoder_fixture(const std::filesystem::path& out_dir,
                                  const EncoderOptions& options);

}  // namespace mkfixture
