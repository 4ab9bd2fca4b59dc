// gguf-py SpecialVocab for verify (ref_vocab.hpp detail::derive_ref_specials): special ids and
// add flags from tokenizer.json's post-processor (RobertaProcessing; TemplateProcessing's single
// template ends and, for WordPiece, its pair template's separator), tokenizer_config.json's
// *_token contents looked up in the added tokens and its add_*_token flags, then config.json's
// *_token_id (first value wins, ids past the vocabulary skipped). tokenizer_config.json values are
// compared as JSON values the way Python compares them.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "model/json_file.hpp"
#include "verify/tokenizer/ref_vocab.hpp"

namespace rebox::verify_ref::detail {
namespace {

using nlohmann::json;
using simdjson::dom::array;
using simdjson::dom::element;

// {"SpecialToken": {"id": X}}: X, else null.
json special_token_id(const element& item) {
    std::string_view id;
    if (item.at_pointer("/SpecialToken/id").get(id) || id.empty()) return nullptr;
    return std::string(id);
}

// {"Sequence": {"id": X}}: X, else null.
json sequence_id(const element& item) {
    std::string_view id;
    if (item.at_pointer("/Sequence/id").get(id)) return nullptr;
    return std::string(id);
}

bool truthy(const json& value) {
    if (value.is_null()) return false;
    if (value.is_string() || value.is_object() || value.is_array()) return !value.empty();
    if (value.is_boolean()) return value.get<bool>();
    return true;
}

struct SpecialIds {
    std::map<std::string, uint32_t> ids;
    uint64_t n_vocab;
    void set(const std::string& type, const json& id) {
        if (!id.is_number_unsigned() || ids.count(type)) return;
        if (id.get<uint64_t>() < n_vocab) ids[type] = static_cast<uint32_t>(id.get<uint64_t>());
    }
};

// The processors of a post_processor: its "processors" list, else itself.
std::vector<element> processors_of(const element& post) {
    std::vector<element> out;
    array list;
    if (!post["processors"].get(list))
        for (const element p : list) out.push_back(p);
    else
        out.push_back(post);
    return out;
}

// The pair template with the single template's ends trimmed: "A [sep] [eos] B" -> add_sep.
std::optional<bool> pair_add_sep(const array& pair_template, const json& first, const json& last,
                                 const json& sep, const json& eos) {
    std::vector<element> pair;
    for (const element item : pair_template) pair.push_back(item);
    size_t begin = 0, end = pair.size();
    if (truthy(first) && !pair.empty() && special_token_id(pair.front()) == first) begin = 1;
    if (truthy(last) && end > begin && special_token_id(pair[end - 1]) == last) --end;
    if (end <= begin) return std::nullopt;
    if (sequence_id(pair[begin]) != "A" || sequence_id(pair[end - 1]) != "B") return std::nullopt;
    if (end - begin <= 2) return std::nullopt;  // nothing between A and B
    const std::vector<element> middle(pair.begin() + static_cast<long>(begin) + 1,
                                      pair.begin() + static_cast<long>(end) - 1);
    const auto is_separator = [&](const json& id) { return id == sep || id == eos; };
    bool add_sep = false;
    if (const json entry = special_token_id(middle[0]); truthy(entry))
        add_sep = is_separator(entry) && !truthy(last);
    if (middle.size() == 2)
        if (const json entry = special_token_id(middle[1]); truthy(entry) && is_separator(entry))
            add_sep = true;
    return add_sep;
}

}  // namespace

void derive_ref_specials(const element* root,
                         const std::vector<std::pair<std::string, uint64_t>>& added,
                         const std::filesystem::path& model_dir, bool wordpiece, RefVocab& vocab) {
    json config = json::object();
    if (std::filesystem::is_regular_file(model_dir / "tokenizer_config.json"))
        config = rebox::detail::read_json_object(model_dir / "tokenizer_config.json");
    const bool has_config = truthy(config);
    std::vector<std::string> types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    std::map<std::string, bool> add;

    json bos = config.value("bos_token", json()), cls = config.value("cls_token", json());
    json eos = config.value("eos_token", json()), sep = config.value("sep_token", json());
    if (root != nullptr) {  // gguf-py reads these fallbacks only with a tokenizer.json
        if (!truthy(bos) && truthy(cls) && has_config) config["bos_token"] = bos = cls;
        if (!truthy(eos) && truthy(sep) && has_config) config["eos_token"] = eos = sep;
    }
    element post;
    if (root != nullptr && !(*root)["post_processor"].get(post) && post.is_object()) {
        for (const element& processor : processors_of(post)) {
            std::string_view type;
            if (processor["type"].get(type)) continue;
            if (type == "RobertaProcessing") {
                add["bos"] = add["eos"] = add["sep"] = true;
                std::string_view id;
                if (!truthy(cls) && has_config)
                    config["cls_token"] = cls =
                        !processor.at_pointer("/cls/0").get(id) ? json(std::string(id)) : bos;
                if (!truthy(sep) && has_config)
                    config["sep_token"] = sep =
                        !processor.at_pointer("/sep/0").get(id) ? json(std::string(id)) : eos;
                continue;
            }
            if (type != "TemplateProcessing") continue;
            json first, last;
            array single;
            if (!processor["single"].get(single) && single.size() > 1) {
                element first_item, last_item;
                if (!single.at(0).get(first_item)) first = special_token_id(first_item);
                if (!single.at(single.size() - 1).get(last_item))
                    last = special_token_id(last_item);
                if (truthy(first)) {
                    if (!has_config) {
                        bos = first;
                    } else if (first != bos && first != cls) {
                        if (!truthy(bos)) config["bos_token"] = bos = first;
                        if (!truthy(cls)) config["cls_token"] = cls = first;
                    }
                    add["bos"] = first == bos || first == cls;
                }
                if (truthy(last)) {
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
            array pair;
            if (wordpiece && !processor["pair"].get(pair) && pair.size() > 0)
                if (const auto add_sep = pair_add_sep(pair, first, last, sep, eos)) {
                    add["sep"] = *add_sep;
                    if (*add_sep && !truthy(sep) && has_config) config["sep_token"] = sep = eos;
                }
        }
    }

    SpecialIds special{{}, vocab.tokens.size()};
    if (vocab.unk_id) special.ids["unk"] = *vocab.unk_id;  // a SentencePiece unknown piece
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
            for (const auto& [text, id] : added)
                if (text == content) {
                    special.set(type, id);
                    break;
                }
        }
    }
    if (std::filesystem::is_regular_file(model_dir / "config.json")) {
        const json hparams = rebox::detail::read_json_object(model_dir / "config.json");
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
    if (wordpiece) {
        vocab.sep_id = id_of("sep");
        vocab.mask_id = id_of("mask");
        if (add.count("sep")) vocab.add_sep = add["sep"];
    }
}

}  // namespace rebox::verify_ref::detail
