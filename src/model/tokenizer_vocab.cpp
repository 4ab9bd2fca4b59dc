// tokenizer.json -> GGUF vocabulary (simdjson DOM; the Qwen3 file is ~11 MB): tokens placed at
// their ids and padded to vocab_size, token types as convert_hf_to_gguf's get_vocab_base assigns
// them; for byte-level BPE merges as gguf-py writes them and the pre-tokenizer name, for
// SentencePiece-style BPE scores and add_space_prefix (tokenizer_spm.cpp). Special ids / add
// flags / chat template are delegated to tokenizer_special.cpp.
#include "model/tokenizer_vocab.hpp"

#include <simdjson.h>

#include <string_view>
#include <unordered_set>

#include "json_file.hpp"
#include "rebox/error.hpp"
#include "tokenizer_gemma4.hpp"
#include "tokenizer_special.hpp"
#include "tokenizer_spm.hpp"
#include "tokenizer_unigram.hpp"

namespace rebox {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr const char* kFile = "tokenizer.json";
// No real vocabulary is near this (Gemma: 262,144); it bounds the allocation for hostile ids.
constexpr uint64_t kMaxVocabSize = uint64_t{1} << 24;

[[noreturn]] void input_error(const std::string& field, const std::string& what,
                              const std::string& expected = "") {
    throw_input_error(kFile, field, what, expected);
}

[[noreturn]] void blocker(const std::string& field, const std::string& what,
                          const std::string& expected = "") {
    throw Error(ExitClass::blocker, kFile, field, what, expected);
}

// Optional member of an object: a null element when absent.
bool member(const object& obj, std::string_view key, element& out) {
    return !obj.at_key(key).get(out);
}

std::string_view string_of(const element& value, const std::string& field) {
    std::string_view text;
    if (value.get(text)) input_error(field, "expected a string");
    return text;
}

uint64_t id_of(const element& value, const std::string& field) {
    uint64_t id = 0;
    if (value.get(id)) input_error(field, "expected a non-negative integer token id");
    return id;
}

// One token as found in the file (views point into the parser's DOM).
struct RawToken {
    uint64_t id;
    std::string_view text;
    bool added;
    bool special;
};

// convert_hf_to_gguf does_token_look_special.
bool looks_special(std::string_view token) {
    if (token == "<pad>" || token == "<mask>" || token == "<2mass>" || token == "[@BOS@]")
        return true;
    if (token.size() >= 4 && token.starts_with("<|") && token.ends_with("|>")) return true;
    // Fullwidth vertical line U+FF5C is EF BD 9C in UTF-8 (deepseek-coder "<｜...｜>").
    if (token.size() >= 8 && token.starts_with("<\xEF\xBD\x9C") && token.ends_with("\xEF\xBD\x9C>"))
        return true;
    return token.starts_with("<unused") && token.ends_with(">");
}

// The tokens of model.vocab and added_tokens, unplaced.
std::vector<RawToken> collect_tokens(const object& model, const element& root) {
    element vocab_element;
    if (!member(model, "vocab", vocab_element)) input_error("model.vocab", "missing");
    object vocab;
    if (vocab_element.get(vocab)) input_error("model.vocab", "expected an object of token -> id");

    std::vector<RawToken> raw;
    raw.reserve(vocab.size() + 1024);
    for (const auto field : vocab)
        raw.push_back({id_of(field.value, "model.vocab"), field.key, false, false});

    element added_element;
    if (!root.at_key("added_tokens").get(added_element) && !added_element.is_null()) {
        array added;
        if (added_element.get(added)) input_error("added_tokens", "expected an array");
        size_t index = 0;
        for (const element item : added) {
            const std::string where = "added_tokens[" + std::to_string(index++) + "]";
            element id_element, content_element, special_element;
            if (!item.is_object() || item.at_key("id").get(id_element) ||
                item.at_key("content").get(content_element))
                input_error(where, "expected an object with id and content");
            bool special = false;
            if (!item.at_key("special").get(special_element) && special_element.get(special))
                input_error(where + ".special", "expected a boolean");
            raw.push_back({id_of(id_element, where + ".id"),
                           string_of(content_element, where + ".content"), true, special});
        }
    }
    return raw;
}

// llama.cpp aborts on duplicate token strings (GGML_ASSERT in the vocab loader).
void check_unique_tokens(const std::vector<std::string>& tokens) {
    std::unordered_set<std::string_view> seen;
    seen.reserve(tokens.size());
    for (size_t id = 0; id < tokens.size(); ++id)
        if (!seen.insert(tokens[id]).second)
            blocker("model.vocab",
                    "token string '" + tokens[id] + "' appears twice (second at id " +
                        std::to_string(id) + ")",
                    "unique token strings, as llama.cpp requires");
}

// Places raw tokens at their ids in a vocab_size table; holes become [PAD<i>] / UNUSED. With
// drop_beyond, added tokens past the table are listed in out.dropped_added_tokens instead of
// refused (Gemma 3's <image_soft_token> sits at id vocab_size). With raw_text, added tokens keep
// their text and type NORMAL (the caller sets the types: Gemma 4).
void place_tokens(const std::vector<RawToken>& raw, uint64_t vocab_size, bool drop_beyond,
                  TokenizerVocab& out, bool raw_text = false) {
    out.tokens.assign(vocab_size, std::string());
    out.token_types.assign(vocab_size, static_cast<int32_t>(TokenType::UNUSED));
    std::vector<uint8_t> placed(vocab_size, 0);  // 0 empty, 1 from model.vocab, 2 added

    for (const RawToken& token : raw) {
        if (token.added && token.id >= vocab_size && drop_beyond) {
            out.dropped_added_tokens.push_back(std::string(token.text) + " (id " +
                                               std::to_string(token.id) + ")");
            continue;
        }
        if (token.id >= vocab_size)
            blocker(token.added ? "added_tokens" : "model.vocab",
                    "token '" + std::string(token.text) + "' has id " + std::to_string(token.id) +
                        " beyond the vocabulary",
                    "ids < vocab_size " + std::to_string(vocab_size));
        // model.vocab comes first; an added token may repeat a model.vocab entry (same id and
        // text).
        std::string& slot = out.tokens[token.id];
        if (placed[token.id] != 0 && slot != token.text)
            blocker("added_tokens", "id " + std::to_string(token.id) + " is both '" + slot +
                                        "' and '" + std::string(token.text) + "'");
        TokenType type = TokenType::NORMAL;
        if (token.added && !raw_text) {
            if (token.special || looks_special(token.text)) {
                type = TokenType::CONTROL;
                slot.assign(token.text);
            } else {
                // The converter pre-normalizes user-defined spaces: U+2581 -> ' '.
                type = TokenType::USER_DEFINED;
                slot.clear();
                std::string_view rest = token.text;
                for (size_t at; (at = rest.find("\xE2\x96\x81")) != std::string_view::npos;
                     rest.remove_prefix(at + 3))
                    slot.append(rest.substr(0, at)).push_back(' ');
                slot.append(rest);
            }
        } else {
            slot.assign(token.text);
        }
        out.token_types[token.id] = static_cast<int32_t>(type);
        placed[token.id] = token.added ? 2 : 1;
    }
    for (uint64_t id = 0; id < vocab_size; ++id)
        if (placed[id] == 0) out.tokens[id] = "[PAD" + std::to_string(id) + "]";

    check_unique_tokens(out.tokens);
}

// WordPiece -> llama.cpp's phantom-space convention (BertModel.set_vocab): control tokens stay as
// they are, a "##" continuation loses its marks, every other token gains U+2581 in front.
void rewrite_wordpiece(TokenizerVocab& vocab) {
    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
        if (vocab.token_types[id] == static_cast<int32_t>(TokenType::CONTROL)) continue;
        std::string& token = vocab.tokens[id];
        if (token.starts_with("##"))
            token.erase(0, 2);
        else
            token.insert(0, "\xE2\x96\x81");
    }
    check_unique_tokens(vocab.tokens);
}

// gguf-py SpecialVocab._parse_normalizer: Lowercase, StripAccents, a BertNormalizer's own flags
// (a null strip_accents stays unset), the members of a Sequence.
void read_normalizer_flags(const element& normalizer, TokenizerVocab& vocab) {
    object obj;
    std::string_view type;
    if (normalizer.get(obj) || obj.at_key("type").get(type)) return;
    if (type == "Lowercase") vocab.normalizer_lowercase = true;
    if (type == "StripAccents") vocab.normalizer_strip_accents = true;
    if (type == "BertNormalizer") {
        element flag;
        bool value = false;
        if (member(obj, "lowercase", flag) && !flag.get(value)) vocab.normalizer_lowercase = value;
        if (member(obj, "strip_accents", flag) && !flag.get(value))
            vocab.normalizer_strip_accents = value;
    }
    array items;
    if (type == "Sequence" && !obj.at_key("normalizers").get(items))
        for (const element item : items) read_normalizer_flags(item, vocab);
}

// model.merges as "a b" strings or ["a", "b"] pairs; pairs are joined with a space and spaces
// inside a part become U+0120 'Ġ' (gguf-py SpecialVocab).
std::vector<std::string> read_merges(const object& model) {
    element merges_element;
    array merges;
    if (!member(model, "merges", merges_element) || merges_element.is_null() ||
        merges_element.get(merges) || merges.size() == 0)
        blocker("model.merges", "missing (a gpt2 BPE tokenizer needs merges)");

    std::vector<std::string> out;
    out.reserve(merges.size());
    size_t index = 0;
    for (const element item : merges) {
        const std::string where = "model.merges[" + std::to_string(index++) + "]";
        std::string_view text;
        if (!item.get(text)) {
            if (text.find(' ', 1) == std::string_view::npos || text.size() < 3)
                input_error(where, "'" + std::string(text) + "' is not a merge", "\"left right\"");
            out.emplace_back(text);
            continue;
        }
        array pair;
        if (item.get(pair) || pair.size() != 2)
            input_error(where, "expected \"a b\" or a pair [\"a\", \"b\"]");
        std::string merged;
        bool first = true;
        for (const element part_element : pair) {
            if (!first) merged.push_back(' ');
            first = false;
            const std::string_view part = string_of(part_element, where);
            if (part.empty()) input_error(where, "empty merge part");
            for (const char c : part) {
                if (c == ' ')
                    merged.append("\xC4\xA0");  // chr(ord(' ') + 256) = U+0120
                else
                    merged.push_back(c);
            }
        }
        out.push_back(std::move(merged));
    }
    return out;
}

// The regexes of the Split pre-tokenizers in order (depth first): a lone Split, or the Splits
// inside a Sequence; the first is the one a single-regex pre type is known by.
void collect_split_regexes(const element& pre, std::vector<std::string_view>& regexes) {
    object obj;
    if (pre.get(obj)) return;
    std::string_view type;
    if (obj.at_key("type").get(type)) return;
    if (type == "Split") {
        std::string_view regex;
        if (!obj.at_pointer("/pattern/Regex").get(regex)) regexes.push_back(regex);
        return;
    }
    array items;
    if (type != "Sequence" || obj.at_key("pretokenizers").get(items)) return;
    for (const element item : items) collect_split_regexes(item, regexes);
}

// A lone ByteLevel pre-tokenizer with its regex on (GPT-2's pre-tokenization).
bool byte_level_only(const element& pre) {
    std::string_view type;
    bool use_regex = true;
    if (pre.at_key("type").get(type) || type != "ByteLevel") return false;
    return pre.at_key("use_regex").get(use_regex) || use_regex;
}

std::string pre_tokenizer_name(const element& root, const TokenizerOptions& options) {
    if (options.pre) return *options.pre;
    element pre;
    const bool has_pre = !root.at_key("pre_tokenizer").get(pre);
    std::vector<std::string_view> regexes;
    if (has_pre) collect_split_regexes(pre, regexes);
    if (regexes.size() > 1)
        if (auto name = pre_tokenizer_for_regex_sequence(regexes)) return *name;
    const auto regex =
        regexes.empty() ? std::nullopt : std::optional<std::string_view>(regexes.front());
    if (!regex && has_pre && !options.byte_level_pre.empty() && byte_level_only(pre))
        return std::string(options.byte_level_pre);
    if (!regex)
        blocker("pre_tokenizer", "no Split pre-tokenizer regex to identify the pre-tokenizer",
                "pass the llama.cpp name with --tokenizer-pre NAME");
    if (auto name = pre_tokenizer_for_regex(std::string(*regex))) return *name;
    blocker("pre_tokenizer", "unknown Split regex '" + std::string(*regex) + "'",
            "a regex rebox knows (qwen2, qwen35, llama-bpe, gpt-4o, deepseek-v3), or "
            "--tokenizer-pre NAME");
}

// SpecialToken ids at both ends of each TemplateProcessing "single" template (len > 1, as gguf-py).
void collect_templates(const element& root, detail::TokenizerJsonSpecials& specials) {
    element post;
    if (root.at_key("post_processor").get(post) || !post.is_object()) return;
    std::vector<element> processors;
    array list;
    if (!post.at_key("processors").get(list)) {
        for (const element item : list) processors.push_back(item);
    } else {
        processors.push_back(post);
    }
    auto special_id = [](const element& item) -> std::optional<std::string> {
        std::string_view id;
        if (item.at_pointer("/SpecialToken/id").get(id)) return std::nullopt;
        return std::string(id);
    };
    for (const element& processor : processors) {
        std::string_view type;
        array single;
        if (!processor.at_key("type").get(type) && type == "RobertaProcessing") {
            // gguf-py: add bos, eos and sep; its cls / sep pairs name the tokens when
            // tokenizer_config.json does not.
            detail::TokenizerJsonSpecials::Roberta roberta;
            std::string_view text;
            if (!processor.at_pointer("/cls/0").get(text)) roberta.cls = std::string(text);
            if (!processor.at_pointer("/sep/0").get(text)) roberta.sep = std::string(text);
            specials.roberta = roberta;
            continue;
        }
        if (processor.at_key("type").get(type) || type != "TemplateProcessing") continue;
        detail::TokenizerJsonSpecials::TemplateEnds ends;
        element first_item, last_item;
        if (!processor.at_key("single").get(single) && single.size() >= 2 &&
            !single.at(0).get(first_item) && !single.at(single.size() - 1).get(last_item)) {
            ends.first = special_id(first_item);
            ends.last = special_id(last_item);
        }
        array pair;
        if (!processor.at_key("pair").get(pair))
            for (const element item : pair) {
                std::string_view id;
                if (!item.at_pointer("/SpecialToken/id").get(id))
                    ends.pair.push_back({true, std::string(id)});
                else if (!item.at_pointer("/Sequence/id").get(id))
                    ends.pair.push_back({false, std::string(id)});
                else
                    ends.pair.push_back({false, ""});
            }
        if (ends.first || ends.last || !ends.pair.empty()) specials.templates.push_back(ends);
    }
}

// The added tokens below the table's size and the post-processor's templates, for SpecialVocab.
detail::TokenizerJsonSpecials json_specials(const std::vector<RawToken>& raw, const element& root,
                                            const TokenizerVocab& vocab) {
    detail::TokenizerJsonSpecials specials;
    for (const RawToken& token : raw)
        if (token.added && token.id < vocab.tokens.size())
            specials.added_tokens.emplace_back(std::string(token.text),
                                               static_cast<uint32_t>(token.id));
    collect_templates(root, specials);
    return specials;
}

// Gemma4Model.set_vocab: LlamaHfVocab's tokens (all of them, in id order: the converter keeps
// added tokens past config.json's vocab_size, which the plan then refuses as a count mismatch),
// scores and types, gguf-py SpecialVocab with merges and every special id (sep, mask and the pair
// template's add_sep too), add_space_prefix false, add_bos true; no tokenizer.ggml.pre.
TokenizerVocab read_gemma4_tokenizer(const std::filesystem::path& model_dir, const element& root,
                                     const object& model, const TokenizerOptions& options) {
    detail::check_gemma4_tokenizer(root, model);
    element vocab_element;
    object model_vocab;
    if (!member(model, "vocab", vocab_element) || vocab_element.get(model_vocab))
        input_error("model.vocab", "expected an object of token -> id");
    const std::vector<RawToken> raw = collect_tokens(model, root);
    uint64_t count = 0;
    for (const RawToken& token : raw) count = std::max(count, token.id + 1);
    if (count == 0) input_error("model.vocab", "no tokens");
    if (count > kMaxVocabSize)
        blocker("model.vocab", "vocabulary of " + std::to_string(count) + " tokens is too large",
                "at most " + std::to_string(kMaxVocabSize));
    TokenizerVocab vocab;
    vocab.model = "gemma4";
    vocab.pre.clear();
    place_tokens(raw, count, false, vocab, true);
    detail::apply_gemma4_vocab(model_dir, model_vocab.size(), vocab);
    vocab.merges = read_merges(model);
    detail::TokenizerJsonSpecials specials = json_specials(raw, root, vocab);
    specials.encoder = true;  // SpecialVocab's sep, mask and add_sep
    detail::apply_special_tokens(model_dir, specials, options.config, vocab);
    vocab.add_space_prefix = false;
    vocab.add_bos = true;
    return vocab;
}

}  // namespace

TokenizerVocab read_tokenizer(const std::filesystem::path& model_dir,
                              const TokenizerOptions& options) {
    const std::filesystem::path path = model_dir / kFile;
    if (options.model == "gemma4" && !std::filesystem::exists(path))
        blocker("", "is missing: Gemma4Model reads Gemma 4's tokenizer from tokenizer.json only",
                "the checkpoint's tokenizer.json");
    if (!std::filesystem::exists(path) && std::filesystem::exists(model_dir / "tokenizer.model"))
        return detail::read_sentencepiece_model(model_dir, options);
    // XLM-R's SentencePiece Unigram model, preferred over tokenizer.json as llama.cpp's converter
    // prefers it; without tokenizer.json gguf-py's SpecialVocab has no added tokens to look in.
    const bool unigram_model = std::filesystem::exists(model_dir / "sentencepiece.bpe.model");
    if (!std::filesystem::exists(path) && unigram_model) {
        TokenizerVocab vocab = detail::read_unigram_sentencepiece(model_dir, options);
        detail::apply_special_tokens(model_dir, detail::TokenizerJsonSpecials{}, options.config,
                                     vocab);
        return vocab;
    }
    detail::check_file_size(path, detail::kMaxTokenizerBytes);
    simdjson::padded_string json;
    if (simdjson::padded_string::load(path.string()).get(json))
        throw_input_error(path.string(), "", "cannot read file");
    simdjson::dom::parser parser;
    element root;
    if (const auto error = parser.parse(json).get(root))
        input_error("", std::string("not valid JSON (") + simdjson::error_message(error) + ")");
    if (!root.is_object()) input_error("", "expected a JSON object at the top level");

    element model_element;
    object model;
    if (root.at_key("model").get(model_element) || model_element.get(model))
        input_error("model", "missing");
    if (options.model == "gemma4") return read_gemma4_tokenizer(model_dir, root, model, options);
    std::string_view model_type;
    if (!model.at_key("type").get(model_type) && model_type == "Unigram") {
        detail::TokenizerJsonSpecials specials;
        TokenizerVocab vocab =
            detail::read_unigram_json(root, model, model_dir, options, specials.added_tokens);
        if (unigram_model) vocab = detail::read_unigram_sentencepiece(model_dir, options);
        collect_templates(root, specials);
        detail::apply_special_tokens(model_dir, specials, options.config, vocab);
        return vocab;
    }
    const bool wordpiece = !model.at_key("type").get(model_type) && model_type == "WordPiece";
    if (!wordpiece && (model.at_key("type").get(model_type) || model_type != "BPE"))
        blocker("model.type", "'" + std::string(model_type) + "' is not supported",
                "BPE (byte-level, or SentencePiece-style with byte_fallback), WordPiece or "
                "Unigram");

    TokenizerVocab vocab;
    const bool sentencepiece = !wordpiece && detail::is_sentencepiece_bpe(model);
    vocab.model = wordpiece ? "bert" : sentencepiece ? "llama" : "gpt2";
    const std::vector<RawToken> raw = collect_tokens(model, root);
    uint64_t vocab_size = options.vocab_size;
    if (vocab_size == 0)
        for (const RawToken& token : raw) vocab_size = std::max(vocab_size, token.id + 1);
    if (vocab_size == 0) input_error("model.vocab", "no tokens");
    if (vocab_size > kMaxVocabSize)
        blocker("model.vocab",
                "vocabulary of " + std::to_string(vocab_size) + " tokens is too large",
                "at most " + std::to_string(kMaxVocabSize));
    place_tokens(raw, vocab_size, options.vocab_size != 0, vocab);
    if (wordpiece) {
        // llama.cpp's WordPiece ignores tokenizer.ggml.pre; the converter names it from a hash of
        // its test text ("bert-bge"), which rebox does not compute.
        vocab.pre = options.pre.value_or("default");
        rewrite_wordpiece(vocab);
        element normalizer;
        if (!root.at_key("normalizer").get(normalizer)) read_normalizer_flags(normalizer, vocab);
    } else if (sentencepiece) {
        vocab.pre = "default";  // what convert_hf_to_gguf writes for SentencePiece vocabularies
        vocab.add_space_prefix = detail::spm_add_space_prefix(root);
        vocab.scores = detail::spm_scores_from_merges(model, vocab.tokens);
        detail::apply_spm_token_types(model, vocab);
    } else {
        vocab.merges = read_merges(model);
        vocab.pre = pre_tokenizer_name(root, options);
    }

    detail::TokenizerJsonSpecials specials = json_specials(raw, root, vocab);
    specials.encoder = options.encoder;
    detail::apply_special_tokens(model_dir, specials, options.config, vocab);
    return vocab;
}

}  // namespace rebox
