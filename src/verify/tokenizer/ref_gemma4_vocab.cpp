// verify's own Gemma 4 vocabulary (ref_vocab.hpp read_ref_gemma4_vocab), written from
// Gemma4Model.set_vocab and gguf-py's LlamaHfVocab: transformers' fast tokenizer gives every
// model.vocab and added_tokens entry at its id; a token is BYTE when its whole text is <0xHH> (ids
// below model.vocab's size), CONTROL when tokenizer_config.json names it (all_special_tokens),
// USER_DEFINED when it is an unnamed added token past model.vocab or one of the seven tokens the
// chat parser reads, NORMAL else; every score is -1000. SpecialVocab then sets the ids and flags
// (sep / mask / add_sep included), and set_vocab adds add_space_prefix false and add_bos true.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "model/json_file.hpp"
#include "rebox/error.hpp"
#include "verify/tokenizer/ref_vocab.hpp"

namespace rebox::verify_ref {
namespace {

[[noreturn]] void g4ref_bad(const std::string& file, const std::string& key,
                            const std::string& what, const std::string& expected = "") {
    throw Error(ExitClass::input, file, key, what, expected);
}

bool g4ref_byte_text(std::string_view text) {
    const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
    return text.size() == 6 && text.substr(0, 3) == "<0x" && text[5] == '>' && hex(text[3]) &&
           hex(text[4]);
}

// tokenizer_config.json's special tokens as transformers lists them: the seven named ones, then
// additional_special_tokens and extra_special_tokens (a list or an object of named tokens), then
// every other top-level key ending in "_token" whose value is a token (a string or {"content"}):
// Gemma 4's sot_token, eot_token, think_token, ... (its converted vocabulary has them CONTROL).
std::vector<std::pair<std::string, std::string>> g4ref_named(const std::filesystem::path& dir) {
    std::vector<std::pair<std::string, std::string>> out;  // text, key
    const std::filesystem::path path = dir / "tokenizer_config.json";
    if (!std::filesystem::is_regular_file(path)) return out;
    const nlohmann::json config = rebox::detail::read_json_object(path);
    const auto take = [&](const nlohmann::json& entry, const std::string& key) {
        if (entry.is_string())
            out.emplace_back(entry.get<std::string>(), key);
        else if (entry.is_object() && entry.value("content", nlohmann::json()).is_string())
            out.emplace_back(entry["content"].get<std::string>(), key);
        else if (!entry.is_null())
            g4ref_bad("tokenizer_config.json", key, "not a token string or {\"content\": ...}");
    };
    for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                            "cls_token", "mask_token"})
        if (config.contains(key)) take(config[key], key);
    for (const char* key : {"additional_special_tokens", "extra_special_tokens"}) {
        if (!config.contains(key) || config[key].is_null()) continue;
        if (!config[key].is_array() && !config[key].is_object())
            g4ref_bad("tokenizer_config.json", key, "not a list or an object of tokens");
        for (const auto& [name, entry] : config[key].items())
            take(entry, std::string(key) + "." + name);
    }
    static const std::set<std::string> kSeven = {"bos_token", "eos_token", "unk_token", "sep_token",
                                                 "pad_token", "cls_token", "mask_token"};
    for (const auto& [key, entry] : config.items()) {
        const bool token_key = key.size() > 6 && key.compare(key.size() - 6, 6, "_token") == 0;
        if (!token_key || kSeven.count(key)) continue;
        if (entry.is_string() ||
            (entry.is_object() && entry.contains("content") && entry["content"].is_string()))
            take(entry, key);
    }
    return out;
}

}  // namespace

RefVocab read_ref_gemma4_vocab(const simdjson::dom::element& root,
                               const std::filesystem::path& model_dir) {
    std::string_view type, decoder;
    bool byte_fallback = false;
    if (root.at_pointer("/model/type").get(type) || type != "BPE" ||
        root.at_pointer("/model/byte_fallback").get(byte_fallback) || !byte_fallback ||
        root.at_pointer("/decoder/type").get(decoder) || decoder != "Sequence")
        g4ref_bad("tokenizer.json", "model",
                  "not a BPE with byte_fallback and a Sequence decoder (LlamaHfVocab's test)");
    simdjson::dom::object model_vocab;
    if (root.at_pointer("/model/vocab").get(model_vocab))
        g4ref_bad("tokenizer.json", "model.vocab", "missing or not an object");
    std::vector<std::pair<uint64_t, std::string>> entries;  // id, text: vocab then added
    for (const auto field : model_vocab) {
        uint64_t id = 0;
        if (field.value.get(id)) g4ref_bad("tokenizer.json", "model.vocab", "a non-integer id");
        entries.emplace_back(id, std::string(field.key));
    }
    const uint64_t base = entries.size();
    std::vector<std::pair<std::string, uint64_t>> added;
    simdjson::dom::array list;
    if (!root["added_tokens"].get(list))
        for (const auto item : list) {
            uint64_t id = 0;
            std::string_view content;
            if (item["id"].get(id) || item["content"].get(content))
                g4ref_bad("tokenizer.json", "added_tokens", "an entry without id and content");
            entries.emplace_back(id, std::string(content));
            added.emplace_back(std::string(content), id);
        }
    uint64_t count = 0;
    for (const auto& [id, text] : entries) count = std::max(count, id + 1);
    if (count > kMaxRefVocab) g4ref_bad("tokenizer.json", "model.vocab", "too many tokens");
    RefVocab vocab;
    vocab.tokens.assign(count, std::string());
    std::vector<bool> filled(count, false);
    for (const auto& [id, text] : entries) {
        if (filled[id] && vocab.tokens[id] != text)
            g4ref_bad("tokenizer.json", "added_tokens", "two texts at id " + std::to_string(id));
        vocab.tokens[id] = text;
        filled[id] = true;
    }
    std::unordered_map<std::string, uint64_t> by_text;
    for (uint64_t id = 0; id < count; ++id) {
        if (!filled[id])
            g4ref_bad("tokenizer.json", "model.vocab", "no token at id " + std::to_string(id));
        by_text.emplace(vocab.tokens[id], id);
    }
    std::set<uint64_t> named;
    for (const auto& [text, key] : g4ref_named(model_dir)) {
        const auto it = by_text.find(text);
        if (it == by_text.end())
            g4ref_bad("tokenizer_config.json", key, "'" + text + "' is not in tokenizer.json");
        named.insert(it->second);
    }
    static const std::set<std::string> kShown = {
        "<|channel>",       "<channel|>",       "<|tool_call>", "<tool_call|>",
        "<|tool_response>", "<tool_response|>", "<|\"|>"};
    vocab.token_types.resize(count);
    for (uint64_t id = 0; id < count; ++id) {
        int32_t t = kTokenNormal;
        if (id < base)
            t = g4ref_byte_text(vocab.tokens[id]) ? kTokenByte
                : named.count(id)                 ? kTokenControl
                                                  : kTokenNormal;
        else
            t = named.count(id) ? kTokenControl : kTokenUserDefined;
        if (kShown.count(vocab.tokens[id])) t = kTokenUserDefined;
        vocab.token_types[id] = t;
    }
    vocab.scores.assign(count, -1000.0f);
    detail::derive_ref_specials(&root, added, model_dir, true, vocab);
    vocab.add_bos = true;
    vocab.add_space_prefix = false;
    return vocab;
}

}  // namespace rebox::verify_ref
