// The KV set of an output GGUF: general.*, {arch}.* hyper-parameters typed as llama.cpp demands
// (UINT32 / FLOAT32 / BOOL / STRING), pooling, and tokenizer.ggml.*.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model_config.hpp"
#include "model/pooling.hpp"
#include "model/tokenizer_vocab.hpp"
#include "rebox/ggml_type.hpp"
#include "rebox/gguf_value.hpp"

namespace rebox {

struct ModelMetadataInput {
    const ModelConfig* config = nullptr;
    const TokenizerVocab* vocab = nullptr;  // may be null (no tokenizer KVs)
    std::optional<PoolingType> pooling;
    LlamaFileType file_type = LlamaFileType::MOSTLY_Q4_1;
    std::string name;  // general.name when card_kvs is empty (tests of the KV layout)
    // The model-card KVs (general.type, general.sampling.*, general.name, ... general.languages:
    // card_metadata_kvs), written right after general.architecture as the converter does.
    std::vector<GgufKV> card_kvs;
    // An encoder with a classifier head (a reranker): {arch}.classifier.output_labels is written
    // from id2label even when transformers' dummy pair is all it has (the head's rows need the
    // count); otherwise only non-dummy labels are, as BertModel writes them.
    bool reranker = false;
    // Per-layer values as FLOAT32 arrays under their own keys (Architecture::layer_scalar_kvs, in
    // its order), written after the {arch}.* hyper-parameters as the converter adds them while it
    // reads the tensors.
    std::vector<std::pair<std::string, std::vector<float>>> layer_scalar_kvs;
};

std::vector<GgufKV> build_model_metadata(const ModelMetadataInput& input);

}  // namespace rebox
