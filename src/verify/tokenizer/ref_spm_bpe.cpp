// SentencePiece-style BPE tokenizer.json (Llama 2, Mistral, Gemma: BPE with byte_fallback, spaces
// as U+2581) for verify, as docs/architectures.md's tokenizer table states rebox writes it:
//  - a score per token: minus the rank of the first merge whose two parts concatenate to the token
//    (so llama.cpp's SPM tokenizer, which merges the highest-scoring pair first, follows the BPE
//    ranks); a token no merge makes scores -(merge count) - 1, below all of them;
//  - types: model.vocab pieces spelled <0xXX> are BYTE, model.unk_token is UNKNOWN (and the
//    unknown id);
//  - add_space_prefix: the normalizer prepends U+2581, or a Metaspace pre-tokenizer's
//    prepend_scheme is not "never" (older files: add_prefix_space).
#include <string_view>
#include <unordered_map>

#include "rebox/error.hpp"
#include "verify/tokenizer/ref_vocab_kinds.hpp"

namespace rebox::verify_ref {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581

[[noreturn]] void bad(const std::string& key, const std::string& what,
                      const std::string& expected = "") {
    throw Error(ExitClass::input, "tokenizer.json", key, what, expected);
}

bool is_byte_piece(std::string_view text) {
    const auto hex = [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
    };
    return text.size() == 6 && text.starts_with("<0x") && text[5] == '>' && hex(text[3]) &&
           hex(text[4]);
}

// A merge's two parts concatenated ("left right" or ["left", "right"]).
std::string merged_text(const element& item, const std::string& key) {
    std::string_view text;
    if (!item.get(text)) {
        const size_t space = text.find(' ');
        if (space == 0 || space == std::string_view::npos || space + 1 == text.size() ||
            text.find(' ', space + 1) != std::string_view::npos)
            bad(key, "'" + std::string(text) + "' is not one merge", "\"left right\"");
        std::string out(text.substr(0, space));
        out.append(text.substr(space + 1));
        return out;
    }
    array pair;
    if (item.get(pair) || pair.size() != 2) bad(key, "not \"a b\" or [\"a\", \"b\"]");
    std::string out;
    for (const element part : pair) {
        std::string_view piece;
        if (part.get(piece) || piece.empty()) bad(key, "a part is not a non-empty string");
        out.append(piece);
    }
    return out;
}

std::vector<float> scores_from_merges(const element& root, const std::vector<std::string>& tokens) {
    array merges;
    if (root.at_pointer("/model/merges").get(merges))
        bad("model.merges", "missing or not an array", "the merges the scores come from");
    std::unordered_map<std::string_view, size_t> id_of;
    id_of.reserve(tokens.size());
    for (size_t id = 0; id < tokens.size(); ++id) id_of.emplace(tokens[id], id);
    const float unmerged = -static_cast<float>(merges.size()) - 1.0f;
    std::vector<float> scores(tokens.size(), unmerged);
    std::vector<bool> scored(tokens.size(), false);
    size_t rank = 0;
    for (const element item : merges) {
        const std::string text = merged_text(item, "model.merges[" + std::to_string(rank) + "]");
        if (const auto it = id_of.find(text); it != id_of.end() && !scored[it->second]) {
            scores[it->second] = -static_cast<float>(rank);
            scored[it->second] = true;
        }
        ++rank;
    }
    return scores;
}

std::vector<element> items_of(const element& item, const char* list_key) {
    std::vector<element> out;
    std::string_view type;
    array list;
    if (!item["type"].get(type) && type == "Sequence" && !item[list_key].get(list))
        for (const element part : list) out.push_back(part);
    else if (item.is_object())
        out.push_back(item);
    return out;
}

bool add_space_prefix(const element& root) {
    bool prefix = false;
    element normalizer;
    if (!root["normalizer"].get(normalizer))
        for (const element& item : items_of(normalizer, "normalizers")) {
            std::string_view type, prepend;
            if (!item["type"].get(type) && type == "Prepend" && !item["prepend"].get(prepend) &&
                prepend == kSpace)
                prefix = true;
        }
    element pre;
    if (!root["pre_tokenizer"].get(pre))
        for (const element& item : items_of(pre, "pretokenizers")) {
            std::string_view type, scheme;
            if (item["type"].get(type) || type != "Metaspace") continue;
            bool flag = false;
            if (!item["prepend_scheme"].get(scheme))
                prefix = prefix || scheme != "never";
            else if (!item["add_prefix_space"].get(flag))
                prefix = prefix || flag;
        }
    return prefix;
}

}  // namespace

void apply_ref_spm_bpe(const element& root, RefVocab& vocab) {
    for (size_t id = 0; id < vocab.tokens.size(); ++id)
        if (vocab.token_types[id] == kTokenNormal && is_byte_piece(vocab.tokens[id]))
            vocab.token_types[id] = kTokenByte;
    std::string_view unk;
    if (!root.at_pointer("/model/unk_token").get(unk) && !unk.empty())
        for (size_t id = 0; id < vocab.tokens.size(); ++id)
            if (vocab.tokens[id] == unk) {
                vocab.token_types[id] = kTokenUnknown;
                vocab.unk_id = static_cast<uint32_t>(id);
                break;
            }
    vocab.scores = scores_from_merges(root, vocab.tokens);
    vocab.add_space_prefix = add_space_prefix(root);
}

}  // namespace rebox::verify_ref
