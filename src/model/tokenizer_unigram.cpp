// tokenizer.json Unigram -> llama.cpp's "t5" (UGM) vocabulary, the tokenizer.json branch of
// BertModel._xlmroberta_set_vocab (see tokenizer_unigram.hpp): piece i and its score are
// model.vocab[i]; the unknown piece (tokenizer_config.json unk_token, else model.unk_id, else 3)
// is UNKNOWN, special added tokens CONTROL, other added tokens USER_DEFINED, the rest NORMAL;
// add_space_prefix is the tokenizer's add_prefix_space, remove_extra_whitespaces its
// clean_up_tokenization_spaces, and the charsmap the Precompiled normalizer's (at the top level or
// inside a Sequence).
#include "tokenizer_unigram.hpp"

#include <nlohmann/json.hpp>
#include <unordered_set>

#include "json_file.hpp"
#include "rebox/error.hpp"

namespace rebox::detail {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr const char* kFile = "tokenizer.json";

[[noreturn]] void input_error(const std::string& field, const std::string& what) {
    throw_input_error(kFile, field, what);
}

std::string_view type_of(const element& item) {
    std::string_view type;
    if (item.at_key("type").get(type)) return {};
    return type;
}

// The content of a tokenizer_config.json "*_token" entry (a string or {"content": ...}).
std::optional<std::string> config_token(const nlohmann::json& config, const char* field) {
    const auto it = config.find(field);
    if (it == config.end()) return std::nullopt;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
        return (*it)["content"].get<std::string>();
    return std::nullopt;
}

// The Precompiled normalizer's charsmap, at the top level or inside a Sequence; empty: none.
std::vector<uint8_t> precompiled_charsmap(const element& root) {
    element normalizer;
    if (root.at_key("normalizer").get(normalizer) || normalizer.is_null()) return {};
    std::vector<element> items{normalizer};
    array list;
    if (type_of(normalizer) == "Sequence" && !normalizer.at_key("normalizers").get(list)) {
        items.clear();
        for (const element item : list) items.push_back(item);
    }
    for (const element& item : items) {
        if (type_of(item) != "Precompiled") continue;
        std::string_view text;
        if (item.at_key("precompiled_charsmap").get(text))
            input_error("normalizer.precompiled_charsmap", "expected a base64 string");
        auto bytes = decode_base64(text);
        if (!bytes) input_error("normalizer.precompiled_charsmap", "not valid base64");
        return std::move(*bytes);
    }
    return {};
}

// add_prefix_space: tokenizer_config.json's flag, else the Metaspace pre-tokenizer's
// (prepend_scheme "never" is false, "always"/"first" true; or its older add_prefix_space),
// else true (transformers' XLMRobertaTokenizer default).
bool add_prefix_space(const element& root, const nlohmann::json& config) {
    if (const auto it = config.find("add_prefix_space"); it != config.end() && it->is_boolean())
        return it->get<bool>();
    element pre;
    if (root.at_key("pre_tokenizer").get(pre) || pre.is_null()) return true;
    std::vector<element> items{pre};
    array list;
    if (type_of(pre) == "Sequence" && !pre.at_key("pretokenizers").get(list)) {
        items.clear();
        for (const element item : list) items.push_back(item);
    }
    for (const element& item : items) {
        if (type_of(item) != "Metaspace") continue;
        std::string_view scheme;
        if (!item.at_key("prepend_scheme").get(scheme)) return scheme != "never";
        bool flag = true;
        if (!item.at_key("add_prefix_space").get(flag)) return flag;
    }
    return true;
}

}  // namespace

std::optional<std::vector<uint8_t>> decode_base64(std::string_view text) {
    auto value_of = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    if (text.size() % 4 != 0) return std::nullopt;
    std::vector<uint8_t> out;
    out.reserve(text.size() / 4 * 3);
    for (size_t at = 0; at < text.size(); at += 4) {
        const bool last = at + 4 == text.size();
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = text[at + k];
            if (c == '=' && last && k >= 2) {
                v[k] = 0;
                ++pad;
                continue;
            }
            if (pad > 0 || (v[k] = value_of(c)) < 0) return std::nullopt;
        }
        const uint32_t triple = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) |
                                (uint32_t(v[2]) << 6) | uint32_t(v[3]);
        out.push_back(static_cast<uint8_t>(triple >> 16));
        if (pad < 2) out.push_back(static_cast<uint8_t>(triple >> 8));
        if (pad < 1) out.push_back(static_cast<uint8_t>(triple));
    }
    return out;
}

TokenizerVocab read_unigram_json(const element& root, const object& model,
                                 const std::filesystem::path& model_dir,
                                 const TokenizerOptions& options,
                                 std::vector<std::pair<std::string, uint32_t>>& added) {
    array pieces;
    if (model.at_key("vocab").get(pieces))
        input_error("model.vocab", "expected a list of [piece, score] pairs");
    const uint64_t piece_count = pieces.size();
    if (piece_count == 0) input_error("model.vocab", "no pieces");
    if (options.vocab_size != 0 && piece_count > options.vocab_size)
        throw Error(ExitClass::blocker, kFile, "model.vocab",
                    std::to_string(piece_count) +
                        " pieces, beyond the vocabulary of config.json vocab_size " +
                        std::to_string(options.vocab_size) + " (token_embd has that many rows)",
                    "the tokenizer that belongs to these weights");
    const uint64_t vocab_size = std::max<uint64_t>(options.vocab_size, piece_count);
    if (vocab_size > (uint64_t{1} << 24)) input_error("model.vocab", "more than 2^24 pieces");

    TokenizerVocab vocab;
    vocab.model = "t5";
    vocab.pre = "default";
    vocab.tokens.reserve(vocab_size);
    vocab.scores.reserve(vocab_size);
    uint64_t index = 0;
    for (const element item : pieces) {
        const std::string where = "model.vocab[" + std::to_string(index++) + "]";
        array pair;
        std::string_view piece;
        double score = 0;
        if (item.get(pair) || pair.size() != 2 || pair.at(0).get(piece) || pair.at(1).get(score))
            input_error(where, "expected [piece, score]");
        vocab.tokens.emplace_back(piece);
        vocab.scores.push_back(static_cast<float>(score));
    }
    vocab.token_types.assign(piece_count, static_cast<int32_t>(TokenType::NORMAL));
    for (uint64_t id = piece_count; id < vocab_size; ++id) {
        vocab.tokens.push_back("[PAD" + std::to_string(id) + "]");
        vocab.scores.push_back(kUnigramPadScore);
        vocab.token_types.push_back(static_cast<int32_t>(TokenType::UNUSED));
    }
    std::unordered_set<std::string_view> seen;
    for (size_t id = 0; id < vocab.tokens.size(); ++id)
        if (!seen.insert(vocab.tokens[id]).second)
            throw Error(ExitClass::blocker, kFile, "model.vocab",
                        "piece '" + vocab.tokens[id] + "' appears twice (second at id " +
                            std::to_string(id) + ")",
                        "unique pieces, as llama.cpp requires");

    // added_tokens: (content, id, special).
    std::unordered_set<uint64_t> special_ids, added_ids;
    element added_element;
    if (!root.at_key("added_tokens").get(added_element) && !added_element.is_null()) {
        array list;
        if (added_element.get(list)) input_error("added_tokens", "expected an array");
        size_t at = 0;
        for (const element item : list) {
            const std::string where = "added_tokens[" + std::to_string(at++) + "]";
            uint64_t id = 0;
            std::string_view content;
            bool special = false;
            if (item.at_key("id").get(id) || item.at_key("content").get(content))
                input_error(where, "expected an object with id and content");
            element flag;
            if (!item.at_key("special").get(flag) && flag.get(special))
                input_error(where + ".special", "expected a boolean");
            if (id >= vocab_size) continue;  // never iterated by the converter
            added.emplace_back(std::string(content), static_cast<uint32_t>(id));
            added_ids.insert(id);
            if (special) special_ids.insert(id);
        }
    }
    const std::filesystem::path config_path = model_dir / "tokenizer_config.json";
    const nlohmann::json config = std::filesystem::is_regular_file(config_path)
                                      ? read_json_object(config_path)
                                      : nlohmann::json::object();
    // The converter: added_vocab.get(unk_token, model.unk_id or 3).
    uint64_t unk_id = 3;
    if (uint64_t id = 0; !model.at_key("unk_id").get(id)) unk_id = id;
    if (const auto unk = config_token(config, "unk_token"))
        for (const auto& [content, id] : added)
            if (content == *unk) {
                unk_id = id;
                break;
            }
    // transformers' all_special_ids: the tokenizer's named special tokens and special added ones.
    for (const char* field : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                              "cls_token", "mask_token"})
        if (const auto content = config_token(config, field))
            for (const auto& [text, id] : added)
                if (text == *content) special_ids.insert(id);
    for (uint64_t id = 0; id < piece_count; ++id) {
        TokenType type = TokenType::NORMAL;
        if (id == unk_id)
            type = TokenType::UNKNOWN;
        else if (special_ids.contains(id))
            type = TokenType::CONTROL;
        else if (added_ids.contains(id))
            type = TokenType::USER_DEFINED;
        vocab.token_types[id] = static_cast<int32_t>(type);
    }
    vocab.add_space_prefix = add_prefix_space(root, config);
    const auto clean = config.find("clean_up_tokenization_spaces");
    vocab.remove_extra_whitespaces =
        clean != config.end() && clean->is_boolean() && clean->get<bool>();
    vocab.precompiled_charsmap = precompiled_charsmap(root);
    return vocab;
}

}  // namespace rebox::detail
