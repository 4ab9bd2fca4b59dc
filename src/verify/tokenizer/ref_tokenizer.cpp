// Reads tokenizer.json (simdjson DOM: the Qwen3 file is ~11 MB) or tokenizer.model
// (ref_spm_model), and tokenizer_config.json / chat_template.jinja / chat_template.json for
// verify: model kind from model.type and model.byte_fallback, the vocabulary (ref_vocab), the
// pre-tokenizer from the first Split regex (llama.cpp's src/llama-vocab.cpp quotes each pre type's
// original regex), merges joined as gguf-py's SpecialVocab does (a pair's parts joined by a space,
// spaces inside a part as U+0120).
#include "verify/tokenizer/ref_tokenizer.hpp"

#include <simdjson.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "rebox/error.hpp"
#include "verify/tokenizer/ref_spm_model.hpp"

namespace rebox::verify_ref {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& key,
                      const std::string& what) {
    throw Error(ExitClass::input, file.string(), key, what);
}

// Real tokenizer files stay well under this (Gemma 3's tokenizer.json is ~33 MB); a larger one is
// refused before it is read.
constexpr uintmax_t kMaxTokenizerFileBytes = uintmax_t{512} << 20;

void check_size(const std::filesystem::path& path) {
    std::error_code error;
    const uintmax_t bytes = std::filesystem::file_size(path, error);
    if (error) bad(path, "", "cannot read file (" + error.message() + ")");
    if (bytes > kMaxTokenizerFileBytes)
        bad(path, "",
            std::to_string(bytes) + " bytes is too large for a tokenizer file (at most " +
                std::to_string(kMaxTokenizerFileBytes) + ")");
}

// Every Split pre-tokenizer's regex in order, alone or inside a Sequence (depth-limited).
void split_regexes(const element& pre, std::vector<std::string_view>& out, int depth = 0) {
    if (depth > 8 || !pre.is_object()) return;
    std::string_view type;
    if (pre["type"].get(type)) return;
    if (type == "Split") {
        std::string_view regex;
        if (!pre.at_pointer("/pattern/Regex").get(regex)) out.push_back(regex);
        return;
    }
    array items;
    if (type != "Sequence" || pre["pretokenizers"].get(items)) return;
    for (const element item : items) split_regexes(item, out, depth + 1);
}

std::vector<std::string> merges_as_gguf(const std::filesystem::path& file, const array& merges) {
    std::vector<std::string> out;
    out.reserve(merges.size());
    size_t index = 0;
    for (const element item : merges) {
        const std::string key = "model.merges[" + std::to_string(index++) + "]";
        std::string_view text;
        if (!item.get(text)) {
            out.emplace_back(text);
            continue;
        }
        array pair;
        if (item.get(pair) || pair.size() != 2) bad(file, key, "not \"a b\" or [\"a\", \"b\"]");
        std::string joined;
        bool first = true;
        for (const element part : pair) {
            std::string_view piece;
            if (part.get(piece)) bad(file, key, "a part is not a string");
            if (!first) joined.push_back(' ');
            first = false;
            for (const char c : piece) {
                if (c == ' ')
                    joined.append("\xC4\xA0");
                else
                    joined.push_back(c);
            }
        }
        out.push_back(std::move(joined));
    }
    return out;
}

std::optional<std::string> read_text(const std::filesystem::path& path) {
    if (!std::filesystem::is_regular_file(path)) return std::nullopt;
    check_size(path);
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in && !in.eof()) bad(path, "", "cannot read file");
    return text.str();
}

nlohmann::json read_object(const std::filesystem::path& path) {
    const auto text = read_text(path);
    if (!text) return nlohmann::json::object();
    nlohmann::json root = nlohmann::json::parse(*text, nullptr, false);
    if (root.is_discarded() || !root.is_object()) bad(path, "", "not a JSON object");
    return root;
}

// tokenizer_config.json chat_template (a string, or the "default" entry of a named list), else
// chat_template.jinja, else chat_template.json's chat_template.
std::optional<std::string> source_chat_template(const std::filesystem::path& model_dir) {
    nlohmann::json value =
        read_object(model_dir / "tokenizer_config.json").value("chat_template", nlohmann::json());
    if (value.is_null()) {
        if (auto jinja = read_text(model_dir / "chat_template.jinja")) return jinja;
        value =
            read_object(model_dir / "chat_template.json").value("chat_template", nlohmann::json());
    }
    if (value.is_string()) return value.get<std::string>();
    if (value.is_array())
        for (const nlohmann::json& entry : value)
            if (entry.is_object() && entry.value("name", nlohmann::json()) == "default" &&
                entry.contains("template") && entry["template"].is_string())
                return entry["template"].get<std::string>();
    return std::nullopt;
}

}  // namespace

std::optional<std::string> ref_pre_for_regex(std::string_view regex) {
    // Qwen2 / Qwen2.5 / Qwen3 split digits one by one; Llama-3 groups up to three; Qwen3.5 / 3.6
    // split as Qwen2, with combining marks (\p{M}) joining the letter runs and leaving the
    // punctuation runs. Each as the Hugging Face tokenizer.json spells it, with the
    // case-insensitive group or llama.cpp's expanded character classes.
    static constexpr std::string_view kTail =
        R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}%| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    static constexpr std::string_view kMarksTail =
        R"(|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}%| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    static constexpr std::string_view kContractions[] = {
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d))",
        R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))"};
    // One line: the names are tokenizer.ggml.pre values, and a test tells them from architecture
    // names by the table's name on the line.
    // clang-format off
    const struct { std::string_view tail; std::string_view digits; const char* pre; }
        kDigitRules[] = {{kTail, "", "qwen2"}, {kTail, "{1,3}", "llama-bpe"}, {kMarksTail, "", "qwen35"}};
    // clang-format on
    for (const std::string_view contractions : kContractions)
        for (const auto& rule : kDigitRules) {
            std::string expected(contractions);
            const size_t mark = rule.tail.find('%');
            expected.append(rule.tail.substr(0, mark));
            expected.append(rule.digits);
            expected.append(rule.tail.substr(mark + 1));
            if (regex == expected) return std::string(rule.pre);
        }
    // o200k (llama.cpp's "gpt-4o" pre type, src/llama-vocab.cpp): a word is an optional
    // non-letter lead, then upper-case-ish letters before lower-case-ish ones (either run may be
    // the empty one, never both), then an optional contraction.
    {
        const std::string lead = R"([^\r\n\p{L}\p{N}]?)";
        const std::string upper = R"([\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])";
        const std::string lower = R"([\p{Ll}\p{Lm}\p{Lo}\p{M}])";
        const std::string contraction = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)?)";
        const std::string o200k =
            lead + upper + "*" + lower + "+" + contraction + "|" + lead + upper + "+" + lower +
            "*" + contraction +
            R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
        if (regex == o200k) return std::string("gpt-4o");
    }
    return std::nullopt;
}

std::optional<std::string> ref_pre_for_split_sequence(
    const std::vector<std::string_view>& regexes) {
    // llama.cpp's "deepseek-v3" (LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM, src/llama-vocab.cpp): numbers
    // of up to three digits; runs of CJK ideographs U+4E00..U+9FA5, hiragana U+3040..U+309F and
    // katakana U+30A0..U+30FF; then an ASCII punctuation mark leading Latin letters,
    // letter-and-mark runs, punctuation-and-symbol runs and the usual whitespace rules. As
    // tokenizer.json spells them: \r and \n as escapes, not the control characters llama.cpp's own
    // copy holds.
    const std::string ascii_punct = R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])";
    const std::string words = ascii_punct + R"([A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+)" +
                              R"(| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    const std::string cjk_kana = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+";
    if (regexes.size() == 3 && regexes[0] == R"(\p{N}{1,3})" && regexes[1] == cjk_kana &&
        regexes[2] == words)
        return std::string("deepseek-v3");
    return std::nullopt;
}

RefTokenizer read_ref_tokenizer(const std::filesystem::path& model_dir, uint64_t vocab_size,
                                bool encoder_bpe, bool gemma4_vocab) {
    RefTokenizer out;
    const std::filesystem::path json_path = model_dir / "tokenizer.json";
    if (gemma4_vocab && !std::filesystem::exists(json_path) &&
        std::filesystem::exists(model_dir / "tokenizer.model"))
        bad(json_path, "", "missing: Gemma4Model reads the vocabulary from tokenizer.json only");
    // XLM-R's SentencePiece Unigram model: the converter prefers it to tokenizer.json.
    const std::filesystem::path unigram_path = model_dir / "sentencepiece.bpe.model";
    const auto unigram_model = [&](const element* root) {
        const auto bytes = read_text(unigram_path);
        if (!bytes) bad(unigram_path, "", "not a regular file");
        const RefSpmModel spm = parse_ref_spm_model(
            *bytes, unigram_path.string(), vocab_size != 0 ? vocab_size : kMaxRefSpmPieces);
        if (spm.model_type != 1)
            bad(unigram_path, "trainer_spec.model_type", "not Unigram (the converter asserts it)");
        return read_ref_unigram_spm_vocab(spm, root, model_dir, vocab_size);
    };
    if (!std::filesystem::exists(json_path) && std::filesystem::exists(unigram_path)) {
        out.present = true;
        out.model = "t5";
        out.pre = "default";
        out.vocab = unigram_model(nullptr);
        out.chat_template = source_chat_template(model_dir);
        return out;
    }
    if (!std::filesystem::exists(json_path) &&
        !std::filesystem::exists(model_dir / "tokenizer.model") &&
        std::filesystem::exists(model_dir / "tiktoken.model")) {
        out = read_ref_tiktoken(model_dir, vocab_size);
        out.chat_template = source_chat_template(model_dir);
        return out;
    }
    if (!std::filesystem::exists(json_path)) {
        if (!std::filesystem::exists(model_dir / "tokenizer.model")) return out;
        out.present = true;
        out.model = "llama";  // SentencePiece: llama.cpp's "llama" vocabulary, pre "default"
        out.pre = "default";
        const std::filesystem::path model_path = model_dir / "tokenizer.model";
        const auto bytes = read_text(model_path);
        if (!bytes) bad(model_path, "", "not a regular file");
        const RefSpmModel spm = parse_ref_spm_model(
            *bytes, model_path.string(), vocab_size != 0 ? vocab_size : kMaxRefSpmPieces);
        out.vocab = read_ref_spm_vocab(spm, model_dir, vocab_size);
        out.chat_template = source_chat_template(model_dir);
        return out;
    }
    out.present = true;
    check_size(json_path);
    simdjson::padded_string text;
    if (simdjson::padded_string::load(json_path.string()).get(text))
        bad(json_path, "", "cannot read file");
    simdjson::dom::parser parser;
    element root;
    if (parser.parse(text).get(root) || !root.is_object()) bad(json_path, "", "not a JSON object");
    object model;
    if (root["model"].get(model)) bad(json_path, "model", "missing or not an object");
    std::string_view type;
    if (gemma4_vocab) {
        out.model = "gemma4";
        array merges;
        if (model["merges"].get(merges)) bad(json_path, "model.merges", "missing");
        out.merges = merges_as_gguf(json_path, merges);
        out.vocab = read_ref_gemma4_vocab(root, model_dir);
        out.chat_template = source_chat_template(model_dir);
        return out;
    }
    if (!model["type"].get(type) && type == "WordPiece") {
        out.model = "bert";  // llama.cpp's WordPiece ignores tokenizer.ggml.pre: rebox's default
        out.pre = "default";
        out.vocab = read_ref_vocab(root, model_dir, vocab_size, RefVocabKind::wordpiece);
        out.chat_template = source_chat_template(model_dir);
        return out;
    }
    if (!model["type"].get(type) && type == "Unigram") {
        out.model = "t5";  // llama.cpp's UGM vocabulary, pre "default" (_xlmroberta_set_vocab)
        out.pre = "default";
        out.vocab = std::filesystem::exists(unigram_path)
                        ? unigram_model(&root)
                        : read_ref_unigram_vocab(root, model_dir, vocab_size);
        out.chat_template = source_chat_template(model_dir);
        return out;
    }
    if (model["type"].get(type) || type != "BPE")
        bad(json_path, "model.type",
            "not \"BPE\", \"WordPiece\" or \"Unigram\", the kinds verify derives");
    bool byte_fallback = false;
    if (model["byte_fallback"].get(byte_fallback)) byte_fallback = false;
    if (byte_fallback) {  // SentencePiece-style BPE: scores stand for the merges
        out.model = "llama";
        out.pre = "default";
        out.vocab = read_ref_vocab(root, model_dir, vocab_size, RefVocabKind::sentencepiece_bpe);
    } else {
        out.model = "gpt2";
        array merges;
        if (!model["merges"].get(merges)) out.merges = merges_as_gguf(json_path, merges);
        element pre;
        std::vector<std::string_view> regexes;
        if (!root["pre_tokenizer"].get(pre)) split_regexes(pre, regexes);
        const auto regex =
            regexes.empty() ? std::nullopt : std::optional<std::string_view>(regexes.front());
        std::string_view pre_type;
        out.byte_level_only = !regex && !root["pre_tokenizer"].get(pre) &&
                              !pre["type"].get(pre_type) && pre_type == "ByteLevel";
        bool use_regex = true;
        if (out.byte_level_only && !pre["use_regex"].get(use_regex) && !use_regex)
            out.byte_level_only = false;  // no regex: not GPT-2's pre-tokenization
        if (regexes.size() > 1) out.pre = ref_pre_for_split_sequence(regexes);  // whole sequence
        if (!regex)
            out.pre_problem = "tokenizer.json has no Split pre-tokenizer regex";
        else if (!out.pre && !(out.pre = ref_pre_for_regex(*regex)))
            out.pre_problem = "tokenizer.json's Split regex is not one verify knows";
        out.vocab = read_ref_vocab(
            root, model_dir, vocab_size,
            encoder_bpe ? RefVocabKind::byte_level_bpe_encoder : RefVocabKind::byte_level_bpe);
    }
    out.chat_template = source_chat_template(model_dir);
    return out;
}

}  // namespace rebox::verify_ref
