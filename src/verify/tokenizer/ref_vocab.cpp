// tokenizer.json -> RefVocab (see ref_vocab.hpp). Token placement and types follow
// convert_hf_to_gguf's get_vocab_base; the SentencePiece / WordPiece steps are in ref_spm_bpe.cpp
// and ref_wordpiece.cpp, the special ids and add flags (gguf-py's SpecialVocab) in
// ref_special_ids.cpp.
#include "verify/tokenizer/ref_vocab.hpp"

#include <algorithm>
#include <set>

#include "rebox/error.hpp"
#include "verify/tokenizer/ref_vocab_kinds.hpp"

namespace rebox::verify_ref {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

[[noreturn]] void bad(const std::string& key, const std::string& what,
                      const std::string& expected = "") {
    throw Error(ExitClass::input, "tokenizer.json", key, what, expected);
}

struct AddedToken {
    uint64_t id;
    std::string content;
    bool special;
};

std::vector<AddedToken> added_tokens(const element& root) {
    std::vector<AddedToken> out;
    element list;
    if (root["added_tokens"].get(list) || list.is_null()) return out;
    array items;
    if (list.get(items)) bad("added_tokens", "expected an array");
    for (const element item : items) {
        const std::string key = "added_tokens[" + std::to_string(out.size()) + "]";
        uint64_t id = 0;
        std::string_view content;
        if (item["id"].get(id)) bad(key + ".id", "expected a non-negative integer");
        if (item["content"].get(content)) bad(key + ".content", "expected a string");
        bool special = false;
        element flag;
        if (!item["special"].get(flag) && flag.get(special))
            bad(key + ".special", "expected a boolean");
        out.push_back({id, std::string(content), special});
    }
    return out;
}

void place(RefVocab& vocab, std::vector<bool>& placed, uint64_t id, std::string text, int32_t type,
           const std::string& key) {
    if (placed[id] && vocab.tokens[id] != text)
        bad(key,
            "id " + std::to_string(id) + " is both '" + vocab.tokens[id] + "' and '" + text + "'");
    vocab.tokens[id] = std::move(text);
    vocab.token_types[id] = type;
    placed[id] = true;
}

}  // namespace

namespace detail {

bool ref_looks_special(std::string_view text) {
    if (text == "<pad>" || text == "<mask>" || text == "<2mass>" || text == "[@BOS@]") return true;
    const auto wrapped = [text](std::string_view open, std::string_view close) {
        return text.size() >= open.size() + close.size() && text.starts_with(open) &&
               text.ends_with(close);
    };
    return wrapped("<|", "|>") || wrapped("<\xEF\xBD\x9C", "\xEF\xBD\x9C>") ||  // <｜ ... ｜>
           wrapped("<unused", ">");
}

std::string ref_spaces_for_metaspace(std::string_view rest) {
    std::string text;
    for (size_t at; (at = rest.find("\xE2\x96\x81")) != std::string_view::npos;
         rest.remove_prefix(at + 3))
        text.append(rest.substr(0, at)).push_back(' ');
    text.append(rest);
    return text;
}

}  // namespace detail

RefVocab read_ref_vocab(const element& root, const std::filesystem::path& model_dir,
                        uint64_t vocab_size, RefVocabKind kind) {
    object model_vocab;
    if (root.at_pointer("/model/vocab").get(model_vocab))
        bad("model.vocab", "missing or not an object of token -> id");
    const std::vector<AddedToken> added = added_tokens(root);
    const bool explicit_size = vocab_size != 0;
    if (!explicit_size) {
        for (const auto field : model_vocab) {
            uint64_t id = 0;
            if (field.value.get(id)) bad("model.vocab", "expected non-negative integer ids");
            vocab_size = std::max(vocab_size, id + 1);
        }
        for (const AddedToken& token : added) vocab_size = std::max(vocab_size, token.id + 1);
    }
    if (vocab_size > kMaxRefVocab)
        bad("model.vocab", std::to_string(vocab_size) + " tokens",
            "at most " + std::to_string(kMaxRefVocab));
    RefVocab vocab;
    vocab.tokens.assign(vocab_size, std::string());
    vocab.token_types.assign(vocab_size, kTokenUnused);
    std::vector<bool> placed(vocab_size, false);
    for (const auto field : model_vocab) {
        uint64_t id = 0;
        if (field.value.get(id)) bad("model.vocab", "expected non-negative integer ids");
        if (id >= vocab_size)
            bad("model.vocab",
                "token '" + std::string(field.key) + "' has id " + std::to_string(id),
                "ids < vocab_size " + std::to_string(vocab_size));
        place(vocab, placed, id, std::string(field.key), kTokenNormal, "model.vocab");
    }
    std::set<uint64_t> added_ids;
    for (const AddedToken& token : added) {
        if (token.id >= vocab_size) continue;  // past config.json's vocab_size: left out
        if (added_ids.count(token.id) && vocab.tokens[token.id] != token.content)
            bad("added_tokens", "id " + std::to_string(token.id) + " is listed twice");
        added_ids.insert(token.id);
        if (token.special || detail::ref_looks_special(token.content)) {
            vocab.tokens[token.id] = token.content;
            vocab.token_types[token.id] = kTokenControl;
        } else {
            vocab.tokens[token.id] = detail::ref_spaces_for_metaspace(token.content);
            vocab.token_types[token.id] = kTokenUserDefined;
        }
        placed[token.id] = true;
    }
    for (uint64_t id = 0; id < vocab_size; ++id)
        if (!placed[id]) vocab.tokens[id] = "[PAD" + std::to_string(id) + "]";
    if (kind == RefVocabKind::sentencepiece_bpe) apply_ref_spm_bpe(root, vocab);
    if (kind == RefVocabKind::wordpiece) apply_ref_wordpiece(root, vocab);
    std::vector<std::pair<std::string, uint64_t>> added_pairs;
    for (const AddedToken& token : added) added_pairs.emplace_back(token.content, token.id);
    detail::derive_ref_specials(
        &root, added_pairs, model_dir,
        kind == RefVocabKind::wordpiece || kind == RefVocabKind::byte_level_bpe_encoder, vocab);
    return vocab;
}

}  // namespace rebox::verify_ref
