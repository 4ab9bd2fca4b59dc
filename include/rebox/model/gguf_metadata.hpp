// The KV set of an output GGUF: general.*, {arch}.* hyper-parameters typed as llama.cpp demands
// (UINT32 / FLOAT32 / BOOL / STRING), pooling, and tokenizer.ggml.*.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rebox/format/ggml_type.hpp"
#include "rebox/format/gguf_value.hpp"
#include "rebox/model/model_config.hpp"
#include "rebox/model/pooling.hpp"
#include "rebox/model/tokenizer_vocab.hpp"

namespace rebox {

struct ModelMetadataInput {
    const ModelConfig* config = nullptr;
    const TokenizerVocab* vocab = nullptr;  // may be null (no tokenizer KVs)
    std::optional<PoolingType> pooling;
    LlamaFileType file_type = LlamaFileType::MOSTLY_Q4_1;
    std::string name;  // general.name
};

std::vector<GgufKV> build_model_metadata(const ModelMetadataInput& input);

}  // namespace rebox
