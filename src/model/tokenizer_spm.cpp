// SentencePiece-style BPE (tokenizer.json with byte_fallback) -> llama.cpp SPM vocabulary: merge
// ranks turned into scores, BYTE / UNKNOWN types, add_space_prefix (see tokenizer_spm.hpp).
#include "tokenizer_spm.hpp"

#include <string_view>
#include <unordered_map>

#include "json_file.hpp"
#include "rebox/error.hpp"

namespace rebox::detail {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr const char* kFile = "tokenizer.json";
constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581 '▁'

[[noreturn]] void blocker(const std::string& field, const std::string& what,
                          const std::string& expected) {
    throw Error(ExitClass::blocker, kFile, field, what, expected);
}

std::string_view type_of(const element& item) {
    std::string_view type;
    if (item.at_key("type").get(type)) return {};
    return type;
}

// The items of a "Sequence" (under list_key) or the single item itself; none for null.
std::vector<element> flatten(const element& item, const char* list_key) {
    std::vector<element> out;
    if (item.is_null()) return out;
    array list;
    if (type_of(item) == "Sequence" && !item.at_key(list_key).get(list)) {
        for (const element part : list) out.push_back(part);
    } else {
        out.push_back(item);
    }
    return out;
}

// "'text' is not supported", built by appending (GCC 12 warns spuriously on operator+ chains).
std::string not_supported(std::string_view type) {
    std::string message = "'";
    message.append(type).append("' is not supported");
    return message;
}

std::string_view string_at(const element& item, const char* pointer) {
    std::string_view text;
    if (item.at_pointer(pointer).get(text)) return {};
    return text;
}

}  // namespace

bool is_sentencepiece_bpe(const object& model) {
    bool byte_fallback = false;
    return !model.at_key("byte_fallback").get(byte_fallback) && byte_fallback;
}

float no_merge_score(size_t merge_count) { return -static_cast<float>(merge_count) - 1.0f; }

std::vector<float> spm_scores_from_merges(const object& model,
                                          const std::vector<std::string>& tokens) {
    element merges_element;
    array merges;
    if (model.at_key("merges").get(merges_element) || merges_element.get(merges))
        blocker("model.merges", "missing", "the BPE merges the scores are derived from");
    // float holds every integer rank exactly up to 2^24 (Gemma 3 has ~515k merges).
    if (merges.size() >= (size_t{1} << 24))
        blocker("model.merges", std::to_string(merges.size()) + " merges",
                "fewer than 2^24, so that every rank is an exact float score");

    std::unordered_map<std::string_view, uint32_t> ids;
    ids.reserve(tokens.size());
    for (uint32_t id = 0; id < tokens.size(); ++id) ids.emplace(tokens[id], id);

    std::vector<float> scores(tokens.size(), no_merge_score(merges.size()));
    std::vector<bool> scored(tokens.size(), false);
    std::string merged;
    size_t rank = 0;
    for (const element item : merges) {
        const std::string where = "model.merges[" + std::to_string(rank) + "]";
        merged.clear();
        std::string_view text;
        array pair;
        if (!item.get(text)) {
            // "left right": SentencePiece pieces carry no ' ' (spaces are U+2581).
            const size_t space = text.find(' ');
            if (space == 0 || space == std::string_view::npos || space + 1 == text.size() ||
                text.find(' ', space + 1) != std::string_view::npos)
                throw_input_error(kFile, where, "'" + std::string(text) + "' is not a merge",
                                  "\"left right\"");
            merged.append(text.substr(0, space)).append(text.substr(space + 1));
        } else if (!item.get(pair) && pair.size() == 2) {
            for (const element part : pair) {
                std::string_view piece;
                if (part.get(piece) || piece.empty())
                    throw_input_error(kFile, where, "merge part is not a non-empty string");
                merged.append(piece);
            }
        } else {
            throw_input_error(kFile, where, "expected \"a b\" or a pair [\"a\", \"b\"]");
        }
        const auto it = ids.find(merged);
        if (it != ids.end() && !scored[it->second]) {
            scores[it->second] = -static_cast<float>(rank);
            scored[it->second] = true;
        }
        ++rank;
    }
    return scores;
}

bool spm_add_space_prefix(const element& root) {
    bool spaces_escaped = false;
    bool prefix = false;

    element normalizer;
    if (!root.at_key("normalizer").get(normalizer)) {
        for (const element& item : flatten(normalizer, "normalizers")) {
            const std::string_view type = type_of(item);
            if (type == "Prepend" && string_at(item, "/prepend") == kMetaspace) {
                prefix = true;
            } else if (type == "Replace" && string_at(item, "/pattern/String") == " " &&
                       string_at(item, "/content") == kMetaspace) {
                spaces_escaped = true;
            } else {
                blocker("normalizer", not_supported(type),
                        "Prepend \"\xE2\x96\x81\" / Replace \" \" -> \"\xE2\x96\x81\" (what "
                        "llama.cpp's SentencePiece tokenizer does)");
            }
        }
    }
    element pre;
    if (!root.at_key("pre_tokenizer").get(pre)) {
        for (const element& item : flatten(pre, "pretokenizers")) {
            const std::string_view type = type_of(item);
            if (type == "Metaspace") {
                if (string_at(item, "/replacement") != kMetaspace)
                    blocker("pre_tokenizer.replacement", "not U+2581", "\"\xE2\x96\x81\"");
                spaces_escaped = true;
                // prepend_scheme "first" (prefix only at the start, not after special tokens)
                // and "always" both map to add_space_prefix; older files say add_prefix_space.
                const std::string_view scheme = string_at(item, "/prepend_scheme");
                bool add_prefix_space = false;
                if (!scheme.empty())
                    prefix = prefix || scheme != "never";
                else if (!item.at_key("add_prefix_space").get(add_prefix_space))
                    prefix = prefix || add_prefix_space;
            } else if (type == "Split" && string_at(item, "/pattern/String") == " ") {
                // Gemma: splits at ' ', of which none is left once the normalizer replaced them.
                if (!spaces_escaped)
                    blocker("pre_tokenizer", "splits at ' ' before spaces become U+2581",
                            "a normalizer Replace \" \" -> \"\xE2\x96\x81\"");
            } else {
                blocker("pre_tokenizer", not_supported(type),
                        "Metaspace, or none (SentencePiece-style BPE)");
            }
        }
    }
    if (!spaces_escaped)
        blocker("normalizer", "spaces are not replaced by U+2581",
                "a SentencePiece-style tokenizer (Replace \" \" -> \"\xE2\x96\x81\" or Metaspace)");
    return prefix;
}

void apply_spm_token_types(const object& model, TokenizerVocab& vocab) {
    auto is_hex = [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
    };
    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
        const std::string& text = vocab.tokens[id];
        if (vocab.token_types[id] == static_cast<int32_t>(TokenType::NORMAL) && text.size() == 6 &&
            text.starts_with("<0x") && text[5] == '>' && is_hex(text[3]) && is_hex(text[4]))
            vocab.token_types[id] = static_cast<int32_t>(TokenType::BYTE);
    }
    std::string_view unk;
    if (model.at_key("unk_token").get(unk) || unk.empty()) return;
    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
        if (vocab.tokens[id] == unk) {
            vocab.token_types[id] = static_cast<int32_t>(TokenType::UNKNOWN);
            vocab.unk_id = static_cast<uint32_t>(id);
            return;
        }
    }
}

}  // namespace rebox::detail
