// ModelConfig + TokenizerVocab + pooling -> the ordered GGUF KV list llama.cpp reads (notes/gguf.md
// §3.1, §5): integers UINT32, floats FLOAT32, flags BOOL, token types an INT32 array.
#include "rebox/model/gguf_metadata.hpp"

#include <stdexcept>

#include "rebox/error.hpp"
#include "rebox/model/tensor_names.hpp"

namespace rebox {
namespace {

// Values are built field by field (the GgufValue representation documented in gguf_value.hpp:
// unsigned as uint64_t, signed as int64_t, floats as double).
GgufValue u32_value(uint32_t v) {
    GgufValue value;
    value.type = GgufType::UINT32;
    value.scalar = uint64_t{v};
    return value;
}

GgufValue f32_value(float v) {
    GgufValue value;
    value.type = GgufType::FLOAT32;
    value.scalar = static_cast<double>(v);
    return value;
}

GgufValue bool_value(bool v) {
    GgufValue value;
    value.type = GgufType::BOOL;
    value.scalar = v;
    return value;
}

GgufValue string_value(std::string v) {
    GgufValue value;
    value.type = GgufType::STRING;
    value.scalar = std::move(v);
    return value;
}

GgufValue string_array_value(const std::vector<std::string>& items) {
    GgufValue value;
    value.type = GgufType::ARRAY;
    value.elem_type = GgufType::STRING;
    value.array.reserve(items.size());
    for (const std::string& item : items) value.array.emplace_back(item);
    return value;
}

GgufValue i32_array_value(const std::vector<int32_t>& items) {
    GgufValue value;
    value.type = GgufType::ARRAY;
    value.elem_type = GgufType::INT32;
    value.array.reserve(items.size());
    for (const int32_t item : items) value.array.emplace_back(int64_t{item});
    return value;
}

}  // namespace

std::vector<GgufKV> build_model_metadata(const ModelMetadataInput& input) {
    if (input.config == nullptr)
        throw std::invalid_argument("build_model_metadata: config is null");
    const ModelConfig& config = *input.config;
    const std::string& arch = config.model_type;
    if (!is_supported_arch(arch))
        throw Error(ExitClass::blocker,
                    error_message("config.json", "model_type", "'" + arch + "' is not supported",
                                  "qwen3, qwen2 or llama"));

    std::vector<GgufKV> kvs;
    auto add = [&kvs](std::string key, GgufValue value) {
        kvs.push_back({std::move(key), std::move(value)});
    };
    auto add_arch = [&](const char* suffix, GgufValue value) {
        add(arch + "." + suffix, std::move(value));
    };

    add("general.architecture", string_value(arch));
    if (!input.name.empty())
        add("general.name", string_value(input.name));  // gguf-py skips empty strings
    add("general.file_type", u32_value(static_cast<uint32_t>(input.file_type)));
    add("general.quantization_version", u32_value(2));  // GGML_QNT_VERSION

    add_arch("context_length", u32_value(config.max_position_embeddings));
    add_arch("embedding_length", u32_value(config.hidden_size));
    add_arch("block_count", u32_value(config.num_hidden_layers));
    add_arch("feed_forward_length", u32_value(config.intermediate_size));
    add_arch("attention.head_count", u32_value(config.num_attention_heads));
    add_arch("attention.head_count_kv", u32_value(config.num_key_value_heads));
    add_arch("rope.freq_base", f32_value(config.rope_theta));
    add_arch("attention.layer_norm_rms_epsilon", f32_value(config.rms_norm_eps));
    // Qwen3's head_dim (128) differs from hidden/heads (1024/16): key/value length must be
    // explicit.
    add_arch("attention.key_length", u32_value(config.head_dim));
    add_arch("attention.value_length", u32_value(config.head_dim));
    add_arch("rope.dimension_count", u32_value(config.head_dim));
    if (arch == "llama")
        add_arch("vocab_size", u32_value(config.vocab_size));  // LlamaModel writes it
    if (input.pooling) add_arch("pooling_type", u32_value(static_cast<uint32_t>(*input.pooling)));

    if (input.vocab != nullptr) {
        const TokenizerVocab& vocab = *input.vocab;
        add("tokenizer.ggml.model", string_value(vocab.model));
        add("tokenizer.ggml.pre", string_value(vocab.pre));
        add("tokenizer.ggml.tokens", string_array_value(vocab.tokens));
        if (vocab.model == "llama")
            add("tokenizer.ggml.scores", GgufValue::f32_array(vocab.scores));
        add("tokenizer.ggml.token_type", i32_array_value(vocab.token_types));
        if (vocab.model != "llama")  // the SentencePiece tokenizer merges by score, not merges
            add("tokenizer.ggml.merges", string_array_value(vocab.merges));
        const std::pair<const char*, const std::optional<uint32_t>*> ids[] = {
            {"tokenizer.ggml.bos_token_id", &vocab.bos_id},
            {"tokenizer.ggml.eos_token_id", &vocab.eos_id},
            {"tokenizer.ggml.eot_token_id", &vocab.eot_id},
            {"tokenizer.ggml.unknown_token_id", &vocab.unk_id},
            {"tokenizer.ggml.padding_token_id", &vocab.pad_id},
        };
        for (const auto& [key, id] : ids)
            if (id->has_value()) add(key, u32_value(**id));
        add("tokenizer.ggml.add_bos_token", bool_value(vocab.add_bos));
        add("tokenizer.ggml.add_eos_token", bool_value(vocab.add_eos));
        if (vocab.add_space_prefix)
            add("tokenizer.ggml.add_space_prefix", bool_value(*vocab.add_space_prefix));
        if (vocab.chat_template) add("tokenizer.chat_template", string_value(*vocab.chat_template));
    }
    return kvs;
}

}  // namespace rebox
