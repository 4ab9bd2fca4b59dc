// Gemma 4's vocabulary (tokenizer_gemma4.hpp): the parts of Gemma4Model.set_vocab that are not the
// shared tokenizer.json reading (tokens placed at their ids, merges, gguf-py SpecialVocab).
#include "tokenizer_gemma4.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "json_file.hpp"
#include "rebox/error.hpp"

namespace rebox::detail {
namespace {

constexpr const char* kTokenizerJson = "tokenizer.json";
constexpr float kGemma4Score = -1000.0f;  // LlamaHfVocab.get_token_score, for every token

// Rendered as text by llama.cpp so its chat parser can read them (Gemma4Model.set_vocab).
constexpr std::string_view kVisibleTokens[] = {
    "<|channel>",       "<channel|>",       "<|tool_call>", "<tool_call|>",
    "<|tool_response>", "<tool_response|>", "<|\"|>"};

// LlamaHfVocab.get_token_type's byte test: the whole text is <0xHH>.
bool gemma4_byte_token(std::string_view text) {
    auto hex = [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
    };
    return text.size() == 6 && text.starts_with("<0x") && text[5] == '>' && hex(text[3]) &&
           hex(text[4]);
}

// A special token entry of tokenizer_config.json: a string or an object with "content".
void gemma4_add_named(const nlohmann::json& entry, const std::string& field,
                      std::vector<std::pair<std::string, std::string>>& out) {
    if (entry.is_string()) {
        out.emplace_back(entry.get<std::string>(), field);
    } else if (entry.is_object() && entry.contains("content") && entry["content"].is_string()) {
        out.emplace_back(entry["content"].get<std::string>(), field);
    } else if (!entry.is_null()) {
        throw_input_error("tokenizer_config.json", field, "is " + entry.dump(),
                          "a token string or {\"content\": ...}");
    }
}

// transformers' all_special_tokens: the named special tokens, additional_special_tokens and
// extra_special_tokens (a list, or a dict of named model tokens), each with the field naming it,
// and the model-specific tokens Gemma 4's own tokenizer_config.json names at its top level
// (sot_token, eot_token, think_token, ...: any other key ending in "_token" whose value is a
// token string or {"content": ...}; booleans such as add_bos_token are not tokens). The
// converter's output on google/gemma-4's tokenizer (llama.cpp's models/ggml-vocab-gemma-4.gguf)
// has every one of those CONTROL.
std::vector<std::pair<std::string, std::string>> gemma4_special_tokens(
    const std::filesystem::path& model_dir) {
    std::vector<std::pair<std::string, std::string>> out;
    const std::filesystem::path path = model_dir / "tokenizer_config.json";
    if (!std::filesystem::exists(path)) return out;
    const nlohmann::json config = read_json_object(path);
    constexpr std::string_view kNamed[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                           "pad_token", "cls_token", "mask_token"};
    for (const std::string_view field : kNamed)
        if (const auto it = config.find(std::string(field)); it != config.end())
            gemma4_add_named(*it, std::string(field), out);
    for (const auto& [key, entry] : config.items()) {
        if (!key.ends_with("_token") || std::ranges::find(kNamed, key) != std::end(kNamed))
            continue;
        if (entry.is_string() ||
            (entry.is_object() && entry.contains("content") && entry["content"].is_string()))
            gemma4_add_named(entry, key, out);
    }
    for (const char* field : {"additional_special_tokens", "extra_special_tokens"}) {
        const auto it = config.find(field);
        if (it == config.end() || it->is_null()) continue;
        if (!it->is_array() && !it->is_object())
            throw_input_error("tokenizer_config.json", field, "is " + it->dump(),
                              "a list of tokens or an object of named tokens");
        for (const auto& [key, entry] : it->items())
            gemma4_add_named(entry, std::string(field) + "." + key, out);
    }
    return out;
}

}  // namespace

void check_gemma4_tokenizer(const simdjson::dom::element& root,
                            const simdjson::dom::object& model) {
    std::string_view type, decoder;
    bool byte_fallback = false;
    if (model.at_key("type").get(type) || type != "BPE" ||
        model.at_key("byte_fallback").get(byte_fallback) || !byte_fallback ||
        root.at_pointer("/decoder/type").get(decoder) || decoder != "Sequence")
        throw Error(ExitClass::blocker, kTokenizerJson, "model",
                    "is not Gemma 4's tokenizer: Gemma4Model reads it with gguf-py's "
                    "LlamaHfVocab, which takes only a BPE with byte_fallback and a Sequence "
                    "decoder",
                    "the checkpoint's own Gemma 4 tokenizer.json");
}

void apply_gemma4_vocab(const std::filesystem::path& model_dir, size_t base_count,
                        TokenizerVocab& vocab) {
    std::unordered_map<std::string_view, uint32_t> ids;
    ids.reserve(vocab.tokens.size());
    for (uint32_t id = 0; id < vocab.tokens.size(); ++id) {
        // place_tokens fills a hole with [PAD<id>] / UNUSED; LlamaHfVocab has no token there.
        if (vocab.token_types[id] == static_cast<int32_t>(TokenType::UNUSED))
            throw Error(ExitClass::blocker, kTokenizerJson, "model.vocab",
                        "has no token with id " + std::to_string(id),
                        "ids without holes, as Gemma4Model's LlamaHfVocab needs");
        ids.emplace(vocab.tokens[id], id);
    }
    std::unordered_set<uint32_t> special;
    for (const auto& [text, field] : gemma4_special_tokens(model_dir)) {
        const auto it = ids.find(text);
        if (it == ids.end())
            throw Error(ExitClass::blocker, "tokenizer_config.json", field,
                        "names '" + text + "', which tokenizer.json does not hold",
                        "the tokenizer_config.json that belongs to this tokenizer.json");
        special.insert(it->second);
    }
    const std::unordered_set<std::string_view> visible(std::begin(kVisibleTokens),
                                                       std::end(kVisibleTokens));
    for (uint32_t id = 0; id < vocab.tokens.size(); ++id) {
        const std::string& text = vocab.tokens[id];
        TokenType type = special.contains(id) ? TokenType::CONTROL : TokenType::NORMAL;
        if (id < base_count && gemma4_byte_token(text)) type = TokenType::BYTE;
        if (id >= base_count && !special.contains(id)) type = TokenType::USER_DEFINED;
        if (visible.contains(text)) type = TokenType::USER_DEFINED;
        vocab.token_types[id] = static_cast<int32_t>(type);
    }
    vocab.scores.assign(vocab.tokens.size(), kGemma4Score);
}

}  // namespace rebox::detail
