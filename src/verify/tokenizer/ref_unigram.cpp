// verify's own reading of a SentencePiece Unigram tokenizer.json (XLM-RoBERTa), written from
// llama.cpp's converter (BertModel._xlmroberta_set_vocab, tokenizer.json branch) and never from
// the writer's tokenizer code: a table of max(vocab_size, pieces) entries, "[PAD<i>]" / -10000 /
// UNUSED where the converter pads; piece i and score i from model.vocab[i]; token types UNKNOWN
// (the unk_token's added id, else model.unk_id, else 3), CONTROL (special ids), USER_DEFINED
// (other added ids), NORMAL; add_space_prefix (the tokenizer's add_prefix_space: a
// tokenizer_config.json flag, else the Metaspace pre-tokenizer's scheme, else true),
// remove_extra_whitespaces (clean_up_tokenization_spaces, false when absent) and the Precompiled
// normalizer's charsmap; then gguf-py SpecialVocab with the encoder's sep / mask / add_sep.
// From a sentencepiece.bpe.model (the converter's preferred branch): the model's pieces, scores and
// types in a table of max(vocab_size, pieces) filler entries, realigned to fairseq ids as
// [<s>, <pad>, </s>, <unk>] (scores 0; CONTROL, CONTROL, CONTROL, UNKNOWN) + table[3:-1], the
// normalizer's add_dummy_prefix, remove_extra_whitespaces and charsmap.
#include <nlohmann/json.hpp>
#include <set>

#include "model/json_file.hpp"
#include "rebox/error.hpp"
#include "verify/tokenizer/ref_spm_model.hpp"
#include "verify/tokenizer/ref_vocab.hpp"

namespace rebox::verify_ref {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;

[[noreturn]] void bad(const std::string& key, const std::string& what,
                      const std::string& expected = "") {
    throw Error(ExitClass::input, "tokenizer.json", key, what, expected);
}

std::string_view kind(const element& item) {
    std::string_view type;
    return item["type"].get(type) ? std::string_view{} : type;
}

// RFC 4648 base64; nullopt when `text` is not.
std::optional<std::vector<uint8_t>> unbase64(std::string_view text) {
    static constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    if (text.size() % 4 == 1) return std::nullopt;
    std::vector<uint8_t> out;
    uint32_t bits = 0;
    int count = 0;
    for (const char c : text) {
        const size_t value = kAlphabet.find(c);
        if (value == std::string_view::npos) return std::nullopt;
        bits = (bits << 6) | static_cast<uint32_t>(value);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out.push_back(static_cast<uint8_t>(bits >> count));
            bits &= (1u << count) - 1;
        }
    }
    return out;
}

// The members of a Sequence under `list`, else the item itself.
std::vector<element> members(const element& item, const char* list) {
    std::vector<element> out;
    array items;
    if (kind(item) == "Sequence" && !item[list].get(items)) {
        for (const element part : items) out.push_back(part);
    } else if (!item.is_null()) {
        out.push_back(item);
    }
    return out;
}

std::optional<std::string> content_of(const nlohmann::json& config, const std::string& key) {
    const nlohmann::json entry = config.value(key, nlohmann::json());
    if (entry.is_string()) return entry.get<std::string>();
    if (entry.is_object() && entry.contains("content") && entry["content"].is_string())
        return entry["content"].get<std::string>();
    return std::nullopt;
}

}  // namespace

RefVocab read_ref_unigram_spm_vocab(const RefSpmModel& model, const element* root,
                                    const std::filesystem::path& model_dir, uint64_t vocab_size) {
    const uint64_t n = model.pieces.size();
    const uint64_t size = std::max(vocab_size, n);
    if (size > kMaxRefVocab || size < 4)
        throw Error(ExitClass::input, "sentencepiece.bpe.model", "pieces",
                    std::to_string(size) + " entries", "4 to 2^24");
    RefVocab vocab;
    vocab.tokens = {"<s>", "<pad>", "</s>", "<unk>"};
    vocab.scores = {0.0f, 0.0f, 0.0f, 0.0f};
    vocab.token_types = {kTokenControl, kTokenControl, kTokenControl, kTokenUnknown};
    for (uint64_t id = 3; id + 1 < size; ++id) {
        if (id < n) {
            const RefSpmPiece& piece = model.pieces[id];
            vocab.tokens.push_back(piece.text);
            vocab.scores.push_back(piece.score);
            // SentencePieceProcessor's IsUnknown / IsControl / IsUnused / IsByte, else NORMAL.
            const int32_t t = piece.type;
            vocab.token_types.push_back(t == 2   ? kTokenUnknown
                                        : t == 3 ? kTokenControl
                                        : t == 5 ? kTokenUnused
                                        : t == 6 ? kTokenByte
                                                 : kTokenNormal);
        } else {
            vocab.tokens.push_back("[PAD" + std::to_string(id) + "]");
            vocab.scores.push_back(-10000.0f);
            vocab.token_types.push_back(kTokenUnused);
        }
    }
    vocab.add_space_prefix = model.add_dummy_prefix;
    vocab.remove_extra_whitespaces = model.remove_extra_whitespaces;
    vocab.precompiled_charsmap = model.precompiled_charsmap;
    std::vector<std::pair<std::string, uint64_t>> added;
    array list;
    if (root != nullptr && !(*root)["added_tokens"].get(list))
        for (const element item : list) {
            uint64_t token_id = 0;
            std::string_view content;
            if (!item["id"].get(token_id) && !item["content"].get(content))
                added.emplace_back(std::string(content), token_id);
        }
    detail::derive_ref_specials(root, added, model_dir, /*wordpiece=*/true, vocab);
    return vocab;
}

RefVocab read_ref_unigram_vocab(const element& root, const std::filesystem::path& model_dir,
                                uint64_t vocab_size) {
    array pieces;
    if (root.at_pointer("/model/vocab").get(pieces))
        bad("model.vocab", "expected a list of [piece, score]");
    const uint64_t n = pieces.size();
    if (vocab_size != 0 && n > vocab_size)
        bad("model.vocab", std::to_string(n) + " pieces",
            "at most config.json vocab_size " + std::to_string(vocab_size));
    const uint64_t size = std::max(vocab_size, n);
    if (size > kMaxRefVocab) bad("model.vocab", "over verify's cap");
    RefVocab vocab;
    for (uint64_t id = 0; id < size; ++id) {
        vocab.tokens.push_back("[PAD" + std::to_string(id) + "]");
        vocab.scores.push_back(-10000.0f);
        vocab.token_types.push_back(kTokenUnused);
    }
    uint64_t id = 0;
    for (const element entry : pieces) {
        std::string_view piece;
        double score = 0;
        if (entry.at(0).get(piece) || entry.at(1).get(score))
            bad("model.vocab[" + std::to_string(id) + "]", "expected [piece, score]");
        vocab.tokens[id] = std::string(piece);
        vocab.scores[id] = static_cast<float>(score);
        vocab.token_types[id] = kTokenNormal;
        ++id;
    }

    nlohmann::json config = nlohmann::json::object();
    if (std::filesystem::is_regular_file(model_dir / "tokenizer_config.json"))
        config = rebox::detail::read_json_object(model_dir / "tokenizer_config.json");
    std::vector<std::pair<std::string, uint64_t>> added;
    std::set<uint64_t> special_ids;
    array list;
    if (!root["added_tokens"].get(list))
        for (const element item : list) {
            uint64_t token_id = 0;
            std::string_view content;
            bool special = false;
            if (item["id"].get(token_id) || item["content"].get(content))
                bad("added_tokens", "expected objects with id and content");
            if (!item["special"].is_null() && item["special"].get(special)) special = false;
            if (token_id >= size) continue;
            added.emplace_back(std::string(content), token_id);
            if (special) special_ids.insert(token_id);
        }
    uint64_t unk = 3;
    if (uint64_t model_unk = 0; !root.at_pointer("/model/unk_id").get(model_unk)) unk = model_unk;
    const auto unk_token = content_of(config, "unk_token");
    for (const auto& [text, token_id] : added)
        if (unk_token && text == *unk_token) {
            unk = token_id;
            break;
        }
    for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                            "cls_token", "mask_token"})
        if (const auto content = content_of(config, key))
            for (const auto& [text, token_id] : added)
                if (text == *content) special_ids.insert(token_id);
    for (uint64_t t = 0; t < n; ++t) {
        bool is_added = false;
        for (const auto& entry : added) is_added = is_added || entry.second == t;
        vocab.token_types[t] = t == unk               ? kTokenUnknown
                               : special_ids.count(t) ? kTokenControl
                               : is_added             ? kTokenUserDefined
                                                      : kTokenNormal;
    }

    // add_prefix_space
    vocab.add_space_prefix = true;
    if (config.contains("add_prefix_space") && config["add_prefix_space"].is_boolean()) {
        vocab.add_space_prefix = config["add_prefix_space"].get<bool>();
    } else {
        element pre;
        if (!root["pre_tokenizer"].get(pre))
            for (const element& item : members(pre, "pretokenizers")) {
                if (kind(item) != "Metaspace") continue;
                std::string_view scheme;
                bool flag = true;
                if (!item["prepend_scheme"].get(scheme))
                    vocab.add_space_prefix = scheme != "never";
                else if (!item["add_prefix_space"].get(flag))
                    vocab.add_space_prefix = flag;
                break;
            }
    }
    vocab.remove_extra_whitespaces = config.contains("clean_up_tokenization_spaces") &&
                                     config["clean_up_tokenization_spaces"].is_boolean() &&
                                     config["clean_up_tokenization_spaces"].get<bool>();
    element normalizer;
    if (!root["normalizer"].get(normalizer))
        for (const element& item : members(normalizer, "normalizers")) {
            if (kind(item) != "Precompiled") continue;
            std::string_view text;
            if (item["precompiled_charsmap"].get(text))
                bad("normalizer.precompiled_charsmap", "expected a base64 string");
            auto bytes = unbase64(text);
            if (!bytes) bad("normalizer.precompiled_charsmap", "not base64");
            vocab.precompiled_charsmap = std::move(*bytes);
            break;
        }
    detail::derive_ref_specials(&root, added, model_dir, /*wordpiece=*/true, vocab);
    return vocab;
}

}  // namespace rebox::verify_ref
