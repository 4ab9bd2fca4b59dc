// Special tokens of the GGUF tokenizer, following gguf-py
// SpecialVocab._try_load_from_tokenizer_json and _try_load_from_config_json (docs/gguf.md §4.4,
// §5):
//  1. tokenizer_config.json {bos,eos,unk,pad,cls,sep}_token contents (a string or {"content":
//  ...});
//  2. each TemplateProcessing post-processor: a leading special token becomes bos (add_bos when it
//  is
//     bos/cls); a trailing one different from eos moves the old eos to eot and becomes eos
//     (add_eos) — the Qwen3-Embedding rule (eos <|endoftext|>, eot <|im_end|>, add_eos true);
//  3. tokenizer_config.json add_{bos,eos}_token booleans override; contents are looked up in
//     tokenizer.json added_tokens (first match), as gguf-py does;
//  4. config.json {bos,eos,unk,pad}_token_id fill ids still unset (first value wins).
// Without tokenizer_config.json only step 2's add flags and step 4 apply (gguf-py returns early).
#include "tokenizer_special.hpp"

#include <array>
#include <nlohmann/json.hpp>
#include <span>

#include "json_file.hpp"
#include "rebox/error.hpp"

namespace rebox::detail {
namespace {

using nlohmann::json;

constexpr const char* kConfigFile = "tokenizer_config.json";

// The content of a tokenizer_config.json "*_token" entry; nullopt for null/absent/other types.
std::optional<std::string> token_content(const json& config, const std::string& field) {
    const auto it = config.find(field);
    if (it == config.end()) return std::nullopt;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object()) {
        const auto content = it->find("content");
        if (content != it->end() && content->is_string()) return content->get<std::string>();
    }
    return std::nullopt;
}

std::optional<uint32_t> added_token_id(const TokenizerJsonSpecials& specials,
                                       const std::optional<std::string>& content) {
    if (!content) return std::nullopt;
    for (const auto& [text, id] : specials.added_tokens)
        if (text == *content) return id;
    return std::nullopt;
}

// Sets slot to id when unset and id names an existing token (gguf-py: first value wins).
void set_first(std::optional<uint32_t>& slot, std::optional<uint32_t> id,
               const TokenizerVocab& vocab) {
    if (!slot && id && *id < vocab.tokens.size()) slot = id;
}

std::optional<std::string> read_text_file(const std::filesystem::path& path) {
    if (!std::filesystem::is_regular_file(path)) return std::nullopt;
    return read_side_file(path);
}

// tokenizer_config.json chat_template, else chat_template.jinja, else chat_template.json's. A list
// of named templates yields its "default" entry (rebox writes only tokenizer.chat_template).
std::optional<std::string> chat_template(const std::filesystem::path& model_dir,
                                         const json& config) {
    json value;
    if (const auto it = config.find("chat_template"); it != config.end()) {
        value = *it;
    } else if (auto jinja = read_text_file(model_dir / "chat_template.jinja")) {
        return jinja;
    } else if (std::filesystem::is_regular_file(model_dir / "chat_template.json")) {
        const json alt = read_json_object(model_dir / "chat_template.json");
        if (const auto it = alt.find("chat_template"); it != alt.end()) value = *it;
    }
    if (value.is_string()) return value.get<std::string>();
    if (value.is_array()) {
        for (const json& entry : value) {
            if (entry.is_object() && entry.value("name", "") == "default" &&
                entry.contains("template") && entry["template"].is_string())
                return entry["template"].get<std::string>();
        }
    }
    return std::nullopt;
}

// gguf-py's TemplateProcessing "pair" rule: with the single template's ends trimmed off and
// "A ... B" left, a separator (sep or eos) right after A when the single template has no trailing
// token, or a second one after it, sets add_sep; any other middle leaves it false.
void apply_pair_template(const TokenizerJsonSpecials::TemplateEnds& ends,
                         const std::optional<std::string>& sep,
                         const std::optional<std::string>& eos, TokenizerVocab& vocab) {
    using Item = TokenizerJsonSpecials::PairItem;
    std::span<const Item> pair = ends.pair;
    if (pair.empty()) return;
    if (ends.first && pair.front().special && pair.front().id == *ends.first)
        pair = pair.subspan(1);
    if (ends.last && !pair.empty() && pair.back().special && pair.back().id == *ends.last)
        pair = pair.subspan(0, pair.size() - 1);
    if (pair.size() < 3 || pair.front().special || pair.front().id != "A" || pair.back().special ||
        pair.back().id != "B")
        return;
    const std::span<const Item> middle = pair.subspan(1, pair.size() - 2);
    const auto is_separator = [&](const Item& item) {
        return item.special && (item.id == sep || item.id == eos);
    };
    bool add_sep = is_separator(middle[0]) && !ends.last;
    if (middle.size() == 2 && is_separator(middle[1])) add_sep = true;
    vocab.add_sep = add_sep;
}

}  // namespace

void apply_special_tokens(const std::filesystem::path& model_dir,
                          const TokenizerJsonSpecials& specials, const json* hparams_json,
                          TokenizerVocab& vocab) {
    const std::filesystem::path config_path = model_dir / "tokenizer_config.json";
    const bool has_config = std::filesystem::is_regular_file(config_path);
    json config = has_config ? read_json_object(config_path) : json::object();

    std::optional<std::string> bos = token_content(config, "bos_token");
    std::optional<std::string> eos = token_content(config, "eos_token");
    std::optional<std::string> cls = token_content(config, "cls_token");
    std::optional<std::string> sep = token_content(config, "sep_token");
    std::optional<std::string> eot;
    bool eot_used = false;
    if (!bos && cls) bos = cls;
    if (!eos && sep) eos = sep;

    std::optional<bool> add_bos, add_eos;
    // The encoders' vocabularies (WordPiece, Unigram) also get sep, mask and add_sep.
    const bool wordpiece = vocab.model == "bert" || vocab.model == "t5" || specials.encoder;
    if (specials.roberta) {  // gguf-py: RobertaProcessing adds bos, eos and sep
        add_bos = add_eos = true;
        vocab.add_sep = true;
        if (!cls && has_config) cls = specials.roberta->cls ? specials.roberta->cls : bos;
        if (!sep && has_config) sep = specials.roberta->sep ? specials.roberta->sep : eos;
    }
    for (const auto& ends : specials.templates) {
        if (ends.first) {
            if (!has_config) {
                bos = ends.first;
            } else if (ends.first != bos && ends.first != cls) {
                if (!bos) bos = ends.first;
                if (!cls) cls = ends.first;
            }
            add_bos = ends.first == bos || ends.first == cls;
        }
        if (ends.last) {
            if (!has_config) {
                eos = ends.last;
            } else if (ends.last != eos) {
                if (!eot_used) {  // gguf-py would use eom for a second move; rebox writes no eom
                    eot = eos;
                    eot_used = true;
                }
                eos = ends.last;
            }
            add_eos = ends.last == eos;
        }
        if (wordpiece) apply_pair_template(ends, sep, eos, vocab);
    }

    if (has_config) {
        vocab.chat_template = chat_template(model_dir, config);
        for (auto [field, flag] : std::array<std::pair<const char*, std::optional<bool>*>, 2>{
                 {{"add_bos_token", &add_bos}, {"add_eos_token", &add_eos}}}) {
            const auto it = config.find(field);
            if (it != config.end() && it->is_boolean()) *flag = it->get<bool>();
        }
        set_first(vocab.bos_id, added_token_id(specials, bos), vocab);
        set_first(vocab.eos_id, added_token_id(specials, eos), vocab);
        set_first(vocab.unk_id, added_token_id(specials, token_content(config, "unk_token")),
                  vocab);
        set_first(vocab.pad_id, added_token_id(specials, token_content(config, "pad_token")),
                  vocab);
        if (eot_used) set_first(vocab.eot_id, added_token_id(specials, eot), vocab);
        if (wordpiece) {
            set_first(vocab.sep_id, added_token_id(specials, sep), vocab);
            set_first(vocab.mask_id, added_token_id(specials, token_content(config, "mask_token")),
                      vocab);
        }
    }
    vocab.add_bos = add_bos.value_or(false);
    vocab.add_eos = add_eos.value_or(false);

    // config.json ids fill what is still unset (integers only, like gguf-py).
    const std::filesystem::path model_config = model_dir / "config.json";
    if (hparams_json != nullptr || std::filesystem::is_regular_file(model_config)) {
        const json hparams =
            hparams_json != nullptr ? *hparams_json : read_json_object(model_config);
        // gguf-py looks in text_config when the top level has none (absent or null).
        const auto text = hparams.find("text_config");
        auto id_of = [&hparams, &text](const char* field) -> std::optional<uint32_t> {
            const json* value = nullptr;
            if (const auto it = hparams.find(field); it != hparams.end()) value = &*it;
            if ((value == nullptr || value->is_null()) && text != hparams.end() &&
                text->is_object())
                if (const auto it = text->find(field); it != text->end()) value = &*it;
            if (value == nullptr || !value->is_number_unsigned()) return std::nullopt;
            const uint64_t id = value->get<uint64_t>();
            if (id > UINT32_MAX) return std::nullopt;
            return static_cast<uint32_t>(id);
        };
        set_first(vocab.bos_id, id_of("bos_token_id"), vocab);
        set_first(vocab.eos_id, id_of("eos_token_id"), vocab);
        set_first(vocab.unk_id, id_of("unk_token_id"), vocab);
        set_first(vocab.pad_id, id_of("pad_token_id"), vocab);
        if (eot_used) set_first(vocab.eot_id, id_of("eot_token_id"), vocab);
        if (wordpiece) {
            set_first(vocab.sep_id, id_of("sep_token_id"), vocab);
            set_first(vocab.mask_id, id_of("mask_token_id"), vocab);
        }
    }
}

}  // namespace rebox::detail
