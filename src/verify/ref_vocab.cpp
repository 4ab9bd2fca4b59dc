// tokenizer.json -> RefVocab (see ref_vocab.hpp). Token placement and types follow
// convert_hf_to_gguf's get_vocab_base; special ids and add flags follow gguf-py's SpecialVocab
// (_try_load_from_tokenizer_json, then _try_load_from_config_json), with tokenizer_config.json
// values compared as JSON values the way Python compares them.
#include "ref_vocab.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "model/json_file.hpp"
#include "rebox/error.hpp"

namespace rebox::verify_ref {
namespace {

using nlohmann::json;
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

// convert_hf_to_gguf's does_token_look_special.
bool looks_special(std::string_view text) {
    if (text == "<pad>" || text == "<mask>" || text == "<2mass>" || text == "[@BOS@]") return true;
    const auto wrapped = [text](std::string_view open, std::string_view close) {
        return text.starts_with(open) && text.ends_with(close);
    };
    return wrapped("<|", "|>") || wrapped("<\xEF\xBD\x9C", "\xEF\xBD\x9C>") ||  // <｜ ... ｜>
           wrapped("<unused", ">");
}

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

// {"SpecialToken": {"id": X}} at one end of a TemplateProcessing "single" list: X, else null.
json special_token_id(const element& item) {
    std::string_view id;
    if (item.at_pointer("/SpecialToken/id").get(id) || id.empty()) return nullptr;
    return std::string(id);
}

bool truthy(const json& value) {
    if (value.is_null()) return false;
    if (value.is_string() || value.is_object() || value.is_array()) return !value.empty();
    if (value.is_boolean()) return value.get<bool>();
    return true;
}

// SpecialVocab's special_token_ids: first value wins, ids past the vocabulary are skipped.
struct SpecialIds {
    std::map<std::string, uint32_t> ids;
    uint64_t n_vocab;
    void set(const std::string& type, const json& id) {
        if (!id.is_number_unsigned() || ids.count(type)) return;
        if (id.get<uint64_t>() < n_vocab) ids[type] = static_cast<uint32_t>(id.get<uint64_t>());
    }
};

void derive_specials(const element& root, const std::vector<AddedToken>& added,
                     const std::filesystem::path& model_dir, RefVocab& vocab) {
    json config = json::object();
    if (std::filesystem::is_regular_file(model_dir / "tokenizer_config.json"))
        config = detail::read_json_object(model_dir / "tokenizer_config.json");
    const bool has_config = truthy(config);
    std::vector<std::string> types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    std::map<std::string, bool> add;
    json bos = config.value("bos_token", json()), cls = config.value("cls_token", json());
    json eos = config.value("eos_token", json()), sep = config.value("sep_token", json());
    if (!truthy(bos) && truthy(cls) && has_config) config["bos_token"] = bos = cls;
    if (!truthy(eos) && truthy(sep) && has_config) config["eos_token"] = eos = sep;

    element post;
    if (!root["post_processor"].get(post) && post.is_object()) {
        std::vector<element> processors;
        array list;
        if (!post["processors"].get(list))
            for (const element p : list) processors.push_back(p);
        else
            processors.push_back(post);
        for (const element& processor : processors) {
            std::string_view type;
            if (processor["type"].get(type)) continue;
            if (type == "RobertaProcessing") {
                add["bos"] = add["eos"] = add["sep"] = true;
                continue;
            }
            array single;
            if (type != "TemplateProcessing" || processor["single"].get(single) ||
                single.size() < 2)
                continue;
            element first_item, last_item;
            if (single.at(0).get(first_item) || single.at(single.size() - 1).get(last_item))
                continue;
            if (const json first = special_token_id(first_item); truthy(first)) {
                if (!has_config) {
                    bos = first;
                } else if (first != bos && first != cls) {
                    if (!truthy(bos)) config["bos_token"] = bos = first;
                    if (!truthy(cls)) config["cls_token"] = cls = first;
                }
                add["bos"] = first == bos || first == cls;
            }
            if (const json last = special_token_id(last_item); truthy(last)) {
                if (!has_config) {
                    eos = last;
                } else if (last != eos) {
                    const bool has_eot =
                        std::find(types.begin(), types.end(), "eot") != types.end();
                    const bool has_eom =
                        std::find(types.begin(), types.end(), "eom") != types.end();
                    if (!has_eot || !has_eom) {
                        const std::string moved = has_eot ? "eom" : "eot";
                        types.push_back(moved);
                        config[moved + "_token"] = eos;
                    }
                    config["eos_token"] = eos = last;
                }
                add["eos"] = last == eos;
            }
        }
    }

    SpecialIds special{{}, vocab.tokens.size()};
    if (has_config) {
        for (const std::string& type : types) {
            if (const auto flag = config.find("add_" + type + "_token");
                flag != config.end() && flag->is_boolean())
                add[type] = flag->get<bool>();
            const json entry = config.value(type + "_token", json());
            std::string content;
            if (entry.is_string())
                content = entry.get<std::string>();
            else if (entry.is_object() && entry.contains("content") && entry["content"].is_string())
                content = entry["content"].get<std::string>();
            else
                continue;
            for (const AddedToken& token : added)
                if (token.content == content) {
                    special.set(type, token.id);
                    break;
                }
        }
    }
    if (std::filesystem::is_regular_file(model_dir / "config.json")) {
        const json hparams = detail::read_json_object(model_dir / "config.json");
        for (const std::string& type : types) {
            json id = hparams.value(type + "_token_id", json());
            if (id.is_null() && hparams.contains("text_config") &&
                hparams["text_config"].is_object())
                id = hparams["text_config"].value(type + "_token_id", json());
            special.set(type, id);
        }
    }
    const auto id_of = [&special](const char* type) -> std::optional<uint32_t> {
        const auto it = special.ids.find(type);
        if (it == special.ids.end()) return std::nullopt;
        return it->second;
    };
    vocab.bos_id = id_of("bos");
    vocab.eos_id = id_of("eos");
    vocab.eot_id = id_of("eot");
    vocab.unk_id = id_of("unk");
    vocab.pad_id = id_of("pad");
    vocab.add_bos = add.count("bos") && add["bos"];
    vocab.add_eos = add.count("eos") && add["eos"];
}

}  // namespace

RefVocab read_ref_vocab(const element& root, const std::filesystem::path& model_dir,
                        uint64_t vocab_size) {
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
        if (token.special || looks_special(token.content)) {
            vocab.tokens[token.id] = token.content;
            vocab.token_types[token.id] = kTokenControl;
        } else {
            // A user-defined token's U+2581 spaces are pre-normalized to ' '.
            std::string text;
            std::string_view rest = token.content;
            for (size_t at; (at = rest.find("\xE2\x96\x81")) != std::string_view::npos;
                 rest.remove_prefix(at + 3))
                text.append(rest.substr(0, at)).push_back(' ');
            text.append(rest);
            vocab.tokens[token.id] = std::move(text);
            vocab.token_types[token.id] = kTokenUserDefined;
        }
        placed[token.id] = true;
    }
    for (uint64_t id = 0; id < vocab_size; ++id)
        if (!placed[id]) vocab.tokens[id] = "[PAD" + std::to_string(id) + "]";
    derive_specials(root, added, model_dir, vocab);
    return vocab;
}

}  // namespace rebox::verify_ref
