// The type rules llama.cpp applies to metadata keys (gguf.cpp: general.alignment UINT32, a power
// of two; llama-model-loader / llama-vocab: get_key() fails on any other type than the C++ one).
#include "gguf_tools/known_keys.hpp"

#include <array>
#include <string_view>

#include "gguf_tools/kv_text.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

struct Rule {
    std::string_view key;
    std::string_view type;
};

// Keys with one fixed name.
constexpr std::array kFixedRules = {
    Rule{"general.architecture", "STRING"},
    Rule{"general.name", "STRING"},
    Rule{"general.alignment", "UINT32"},
    Rule{"general.file_type", "UINT32"},
    Rule{"general.quantization_version", "UINT32"},
    Rule{"tokenizer.ggml.model", "STRING"},
    Rule{"tokenizer.ggml.pre", "STRING"},
    Rule{"tokenizer.chat_template", "STRING"},
    Rule{"tokenizer.ggml.tokens", "ARRAY[STRING]"},
    Rule{"tokenizer.ggml.merges", "ARRAY[STRING]"},
    Rule{"tokenizer.ggml.scores", "ARRAY[FLOAT32]"},
    Rule{"tokenizer.ggml.token_type", "ARRAY[INT32]"},
    Rule{"tokenizer.ggml.token_type_count", "UINT32"},
    Rule{"tokenizer.ggml.add_bos_token", "BOOL"},
    Rule{"tokenizer.ggml.add_eos_token", "BOOL"},
    Rule{"tokenizer.ggml.add_sep_token", "BOOL"},
    Rule{"tokenizer.ggml.add_space_prefix", "BOOL"},
    Rule{"tokenizer.ggml.remove_extra_whitespaces", "BOOL"},
};

// "<arch>.<suffix>" keys read with a scalar get_key (head counts and feed_forward_length are
// left out: llama.cpp also accepts per-layer arrays for them).
constexpr std::array kArchRules = {
    Rule{"context_length", "UINT32"},
    Rule{"embedding_length", "UINT32"},
    Rule{"block_count", "UINT32"},
    Rule{"vocab_size", "UINT32"},
    Rule{"pooling_type", "UINT32"},
    Rule{"attention.key_length", "UINT32"},
    Rule{"attention.value_length", "UINT32"},
    Rule{"attention.layer_norm_epsilon", "FLOAT32"},
    Rule{"attention.layer_norm_rms_epsilon", "FLOAT32"},
    Rule{"attention.causal", "BOOL"},
    Rule{"rope.freq_base", "FLOAT32"},
    Rule{"rope.dimension_count", "UINT32"},
};

// Model-card keys as gguf-py's GGUFWriter types them (Metadata.set_gguf_meta_model).
constexpr std::array kModelCardRules = {
    Rule{"general.type", "STRING"},
    Rule{"general.sampling.sequence", "STRING"},
    Rule{"general.sampling.top_k", "INT32"},
    Rule{"general.sampling.top_p", "FLOAT32"},
    Rule{"general.sampling.min_p", "FLOAT32"},
    Rule{"general.sampling.xtc_probability", "FLOAT32"},
    Rule{"general.sampling.xtc_threshold", "FLOAT32"},
    Rule{"general.sampling.temp", "FLOAT32"},
    Rule{"general.sampling.penalty_last_n", "INT32"},
    Rule{"general.sampling.penalty_repeat", "FLOAT32"},
    Rule{"general.sampling.mirostat", "INT32"},
    Rule{"general.sampling.mirostat_tau", "FLOAT32"},
    Rule{"general.sampling.mirostat_eta", "FLOAT32"},
    Rule{"general.author", "STRING"},
    Rule{"general.version", "STRING"},
    Rule{"general.organization", "STRING"},
    Rule{"general.finetune", "STRING"},
    Rule{"general.basename", "STRING"},
    Rule{"general.description", "STRING"},
    Rule{"general.quantized_by", "STRING"},
    Rule{"general.size_label", "STRING"},
    Rule{"general.license", "STRING"},
    Rule{"general.license.name", "STRING"},
    Rule{"general.license.link", "STRING"},
    Rule{"general.url", "STRING"},
    Rule{"general.doi", "STRING"},
    Rule{"general.uuid", "STRING"},
    Rule{"general.repo_url", "STRING"},
    Rule{"general.source.url", "STRING"},
    Rule{"general.source.doi", "STRING"},
    Rule{"general.source.uuid", "STRING"},
    Rule{"general.source.repo_url", "STRING"},
    Rule{"general.base_model.count", "UINT32"},
    Rule{"general.dataset.count", "UINT32"},
    Rule{"general.tags", "ARRAY[STRING]"},
    Rule{"general.languages", "ARRAY[STRING]"},
};

// general.base_model.N.name / author / version / organization / description / url / doi / uuid /
// repo_url (and the same under general.dataset.N.).
bool is_source_entry_key(std::string_view key) {
    for (const std::string_view prefix : {"general.base_model.", "general.dataset."}) {
        if (!key.starts_with(prefix)) continue;
        std::string_view rest = key.substr(prefix.size());
        size_t digits = 0;
        while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
        if (digits == 0 || digits >= rest.size() || rest[digits] != '.') return false;
        rest = rest.substr(digits + 1);
        for (const std::string_view field : {"name", "author", "version", "organization",
                                             "description", "url", "doi", "uuid", "repo_url"})
            if (rest == field) return true;
    }
    return false;
}

const GgufValue* find_kv(const std::vector<GgufKV>& kvs, std::string_view key) {
    for (const GgufKV& kv : kvs)
        if (kv.key == key) return &kv.value;
    return nullptr;
}

}  // namespace

std::optional<std::string> llama_required_type(const std::string& key, const std::string& arch) {
    for (const Rule& rule : kFixedRules)
        if (rule.key == key) return std::string(rule.type);
    // tokenizer.ggml.bos_token_id, eos_, unknown_, seperator_, padding_, cls_, mask_, eot_, ...
    if (key.starts_with("tokenizer.ggml.") && key.ends_with("_token_id")) return "UINT32";
    if (!arch.empty() && key.size() > arch.size() + 1 && key.starts_with(arch) &&
        key[arch.size()] == '.') {
        const std::string_view suffix = std::string_view(key).substr(arch.size() + 1);
        for (const Rule& rule : kArchRules)
            if (rule.key == suffix) return std::string(rule.type);
    }
    return std::nullopt;
}

std::optional<std::string> converter_model_card_type(const std::string& key) {
    for (const Rule& rule : kModelCardRules)
        if (rule.key == key) return std::string(rule.type);
    if (is_source_entry_key(key)) return "STRING";
    return std::nullopt;
}

bool llama_requires_key(const std::string& key, const std::string& arch) {
    for (const char* required :
         {"general.architecture", "tokenizer.ggml.model", "tokenizer.ggml.tokens"})
        if (key == required) return true;
    for (const char* suffix : {".context_length", ".embedding_length", ".block_count"})
        if (!arch.empty() && key == arch + suffix) return true;
    return false;
}

void check_llama_kv_rules(const std::string& file, const std::vector<GgufKV>& kvs,
                          const std::vector<std::string>& touched) {
    const GgufValue* arch = find_kv(kvs, "general.architecture");
    if (arch == nullptr)
        throw_input_error(file, "general.architecture",
                          "would be missing; llama.cpp cannot load a model without it",
                          "a STRING naming the architecture");
    if (arch->as_string() == nullptr)
        throw_input_error(file, "general.architecture",
                          "has type " + gguf_type_spec_name(*arch) + "; llama.cpp rejects it",
                          "STRING");
    if (const GgufValue* alignment = find_kv(kvs, "general.alignment")) {
        const auto v = alignment->as_u32();
        if (!v)
            throw_input_error(file, "general.alignment",
                              "has type " + gguf_type_spec_name(*alignment) +
                                  "; llama.cpp's gguf reader rejects it",
                              "UINT32");
        if (*v == 0 || (*v & (*v - 1)) != 0)
            throw_input_error(
                file, "general.alignment",
                std::to_string(*v) + " is not a power of two; llama.cpp's gguf reader rejects it",
                "a non-zero power of two such as 32");
    }
    for (const std::string& key : touched) {
        const GgufValue* value = find_kv(kvs, key);
        if (value == nullptr) continue;
        const auto required = llama_required_type(key, *arch->as_string());
        const std::string actual = gguf_type_spec_name(*value);
        if (required && *required != actual)
            throw_input_error(file, key, "type " + actual + " would make llama.cpp refuse the file",
                              *required + ", e.g. --set " + key + ":" + *required + "=VALUE");
    }
}

}  // namespace rebox
