// Tokenizer generation and copying for the fixtures (see tokenizer_files.hpp).
#include "tokenizer_files.hpp"

#include <simdjson.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace mkfixture {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

const char* const kQwenSplitRegex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

namespace {

constexpr int kSmallMerges = 200;

// Built-in text the small tokenizer learns its merges from.
const char* const kTrainingText =
    "The quick brown fox jumps over the lazy dog. A small model reads the text and turns every "
    "word into tokens; the tokens are numbers that the network can use. When the weights are "
    "stored with fewer bits, the model becomes smaller and faster, and the answers should stay "
    "the same. This is the reason we check that every value is carried over exactly, without "
    "rounding, clipping or any other change. There are many ways to store a number, and the "
    "simplest one is often the best one. In the morning the sun rises in the east; in the "
    "evening it sets in the west. People like to read, to write, to think and to talk with "
    "each other about the things that matter to them. Numbers such as 1, 2, 3, 42 and 2025 "
    "appear in the text as well, together with names like Alice, Bob and the city of Paris. "
    "The embedding of a sentence is a vector that represents its meaning, and similar "
    "sentences should have similar vectors. Testing is the art of finding the mistakes before "
    "the users find them.\n";

std::string utf8(uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else {  // the byte map only needs code points below 0x800
        s += static_cast<char>(0xc0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    }
    return s;
}

// GPT-2's bytes_to_unicode, as (byte, symbol) in GPT-2's vocabulary order.
std::vector<std::pair<int, std::string>> byte_symbols() {
    std::vector<int> bytes, points;
    for (int b = 0; b < 256; ++b)
        if ((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff)) {
            bytes.push_back(b);
            points.push_back(b);
        }
    int extra = 0;
    for (int b = 0; b < 256; ++b)
        if (std::find(bytes.begin(), bytes.end(), b) == bytes.end()) {
            bytes.push_back(b);
            points.push_back(256 + extra++);
        }
    std::vector<std::pair<int, std::string>> out;
    for (size_t i = 0; i < bytes.size(); ++i)
        out.emplace_back(bytes[i], utf8(static_cast<uint32_t>(points[i])));
    return out;
}

bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_space(unsigned char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// A simplified ASCII version of the Qwen split: " ?letters", one digit, " ?punct+\n*", spaces.
std::vector<std::string> split_words(const std::string& text) {
    std::vector<std::string> words;
    size_t i = 0;
    while (i < text.size()) {
        size_t j = i;
        const auto c = static_cast<unsigned char>(text[i]);
        const bool lead_space =
            c == ' ' && i + 1 < text.size() && !is_space(static_cast<unsigned char>(text[i + 1]));
        if (lead_space || !is_space(c)) {
            if (lead_space) ++j;
            const auto d = static_cast<unsigned char>(text[j]);
            if (is_letter(d)) {
                while (j < text.size() && is_letter(static_cast<unsigned char>(text[j]))) ++j;
            } else if (is_digit(d)) {
                if (lead_space) {
                    j = i + 1;  // the space stands alone before a digit
                } else {
                    ++j;
                }
            } else {
                while (j < text.size() && !is_space(static_cast<unsigned char>(text[j])) &&
                       !is_letter(static_cast<unsigned char>(text[j])) &&
                       !is_digit(static_cast<unsigned char>(text[j])))
                    ++j;
                while (j < text.size() && text[j] == '\n') ++j;
            }
        } else {
            while (j < text.size() && is_space(static_cast<unsigned char>(text[j]))) ++j;
        }
        words.push_back(text.substr(i, j - i));
        i = j;
    }
    return words;
}

ojson added_token(int64_t id, const std::string& content) {
    return ojson{{"id", id},        {"content", content}, {"single_word", false},
                 {"lstrip", false}, {"rstrip", false},    {"normalized", false},
                 {"special", true}};
}

ojson byte_level() {
    return ojson{{"type", "ByteLevel"},
                 {"add_prefix_space", false},
                 {"trim_offsets", false},
                 {"use_regex", false}};
}

ojson small_tokenizer_json() {
    const auto symbols = byte_symbols();
    std::map<int, std::string> byte_to_symbol;
    ojson vocab = ojson::object();
    std::set<std::string> known;
    int64_t next_id = 0;
    for (const auto& [byte, symbol] : symbols) {
        byte_to_symbol[byte] = symbol;
        vocab[symbol] = next_id++;
        known.insert(symbol);
    }
    // Word frequencies, each word as a list of byte symbols.
    std::map<std::string, int64_t> counts;
    for (const std::string& w : split_words(kTrainingText)) ++counts[w];
    std::vector<std::pair<std::vector<std::string>, int64_t>> words;
    for (const auto& [w, n] : counts) {
        std::vector<std::string> syms;
        for (unsigned char c : w) syms.push_back(byte_to_symbol[c]);
        words.emplace_back(std::move(syms), n);
    }
    ojson merges = ojson::array();
    std::set<std::pair<std::string, std::string>> banned;  // pairs whose result already exists
    while (static_cast<int>(merges.size()) < kSmallMerges) {
        std::map<std::pair<std::string, std::string>, int64_t> pairs;
        for (const auto& [syms, n] : words)
            for (size_t i = 0; i + 1 < syms.size(); ++i)
                if (!banned.count({syms[i], syms[i + 1]})) pairs[{syms[i], syms[i + 1]}] += n;
        if (pairs.empty()) break;
        auto best = pairs.begin();  // highest count; ties: smallest pair (map order)
        for (auto it = pairs.begin(); it != pairs.end(); ++it)
            if (it->second > best->second) best = it;
        const auto [left, right] = best->first;
        const std::string merged = left + right;
        if (known.count(merged)) {
            banned.insert(best->first);
            continue;
        }
        known.insert(merged);
        vocab[merged] = next_id++;
        merges.push_back(ojson::array({left, right}));
        for (auto& [syms, n] : words) {
            std::vector<std::string> out;
            for (size_t i = 0; i < syms.size(); ++i) {
                if (i + 1 < syms.size() && syms[i] == left && syms[i + 1] == right) {
                    out.push_back(merged);
                    ++i;
                } else {
                    out.push_back(syms[i]);
                }
            }
            syms = std::move(out);
        }
    }
    ojson added = ojson::array();
    for (const char* content : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"})
        added.push_back(added_token(next_id++, content));

    ojson split = {{"type", "Split"},
                   {"pattern", {{"Regex", kQwenSplitRegex}}},
                   {"behavior", "Isolated"},
                   {"invert", false}};
    ojson model = {{"type", "BPE"},
                   {"dropout", nullptr},
                   {"unk_token", nullptr},
                   {"continuing_subword_prefix", ""},
                   {"end_of_word_suffix", ""},
                   {"fuse_unk", false},
                   {"byte_fallback", false},
                   {"ignore_merges", false},
                   {"vocab", vocab},
                   {"merges", merges}};
    return ojson{{"version", "1.0"},
                 {"truncation", nullptr},
                 {"padding", nullptr},
                 {"added_tokens", added},
                 {"normalizer", {{"type", "NFC"}}},
                 {"pre_tokenizer",
                  {{"type", "Sequence"}, {"pretokenizers", ojson::array({split, byte_level()})}}},
                 {"post_processor", byte_level()},
                 {"decoder", byte_level()},
                 {"model", model}};
}

ojson small_tokenizer_config(const ojson& tokenizer) {
    ojson decoder = ojson::object();
    for (const ojson& t : tokenizer["added_tokens"]) {
        ojson entry = t;
        const std::string id = std::to_string(t["id"].get<int64_t>());
        entry.erase("id");
        decoder[id] = entry;
    }
    return ojson{{"add_bos_token", false},
                 {"add_prefix_space", false},
                 {"added_tokens_decoder", decoder},
                 {"bos_token", nullptr},
                 {"clean_up_tokenization_spaces", false},
                 {"eos_token", "<|im_end|>"},
                 {"errors", "replace"},
                 {"model_max_length", 32768},
                 {"pad_token", "<|endoftext|>"},
                 {"split_special_tokens", false},
                 {"tokenizer_class", "Qwen2Tokenizer"},
                 {"unk_token", nullptr}};
}

// Qwen3-Embedding's post-processor: every sequence ends with <|endoftext|> (id eos_id).
ojson embedding_post_processor(int64_t eos_id) {
    const std::string eos = "<|endoftext|>";
    auto seq = [](const char* id, int type) {
        return ojson{{"Sequence", {{"id", id}, {"type_id", type}}}};
    };
    auto special = [&](int type) {
        return ojson{{"SpecialToken", {{"id", eos}, {"type_id", type}}}};
    };
    return ojson{
        {"type", "TemplateProcessing"},
        {"single", ojson::array({seq("A", 0), special(0)})},
        {"pair", ojson::array({seq("A", 0), special(0), seq("B", 1), special(1)})},
        {"special_tokens",
         {{eos, {{"id", eos}, {"ids", ojson::array({eos_id})}, {"tokens", ojson::array({eos})}}}}}};
}

int64_t added_token_id(const ojson& tokenizer, const std::string& content) {
    for (const ojson& t : tokenizer.at("added_tokens"))
        if (t.at("content") == content) return t.at("id").get<int64_t>();
    throw std::runtime_error("tokenizer.json: added_tokens: no " + content);
}

int64_t token_count(const ojson& tokenizer) {
    int64_t max_id = -1;
    for (const auto& [token, id] : tokenizer.at("model").at("vocab").items())
        max_id = std::max(max_id, id.get<int64_t>());
    for (const ojson& t : tokenizer.at("added_tokens"))
        max_id = std::max(max_id, t.at("id").get<int64_t>());
    return max_id + 1;
}

// The real tokenizer (150k vocab) goes through simdjson's DOM, which keeps key order and is
// fast; fields we do not change are re-emitted minified with their content unchanged.
struct Qwen3Tokenizer {
    int64_t count = 0;
    std::string text;  // rewritten (or empty when nothing changes)
};

std::string json_key(std::string_view key) { return nlohmann::json(std::string(key)).dump(); }

Qwen3Tokenizer process_qwen3(const std::string& source_text, const fs::path& source,
                             const TokenizerOptions& options) {
    simdjson::dom::parser parser;
    const simdjson::padded_string padded(source_text);
    simdjson::dom::element doc;
    if (parser.parse(padded).get(doc) != simdjson::SUCCESS || !doc.is_object())
        throw std::runtime_error(source.string() + ": not a JSON object");
    Qwen3Tokenizer result;
    int64_t max_id = -1, eos_id = -1;
    try {
        for (auto field : doc["model"]["vocab"].get_object())
            max_id = std::max(max_id, static_cast<int64_t>(field.value.get_int64()));
        for (auto token : doc["added_tokens"].get_array()) {
            const int64_t id = token["id"].get_int64();
            if (options.kind != "gemma3") max_id = std::max(max_id, id);
            if (std::string_view(token["content"].get_string()) == "<|endoftext|>") eos_id = id;
        }
    } catch (const simdjson::simdjson_error& e) {
        throw std::runtime_error(source.string() + ": model.vocab / added_tokens: " + e.what());
    }
    result.count = max_id + 1;
    if (!options.embedding_eos && !options.drop_merges) return result;
    if (options.embedding_eos && eos_id < 0)
        throw std::runtime_error(source.string() + ": added_tokens: no <|endoftext|>");
    std::string out = "{";
    bool first = true;
    for (auto field : doc.get_object()) {
        if (!first) out += ",";
        first = false;
        out += json_key(field.key) + ":";
        if (field.key == "post_processor" && options.embedding_eos) {
            out += embedding_post_processor(eos_id).dump();
        } else if (field.key == "model" && options.drop_merges) {
            std::string model = "{";
            for (auto part : field.value.get_object()) {
                if (part.key == "merges") continue;
                if (model.size() > 1) model += ",";
                model += json_key(part.key) + ":" + simdjson::minify(part.value);
            }
            out += model + "}";
        } else {
            out += simdjson::minify(field.value);
        }
    }
    result.text = out + "}\n";
    return result;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path.string() + ": cannot read");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

}  // namespace

int64_t write_tokenizer_files(const fs::path& out_dir, const TokenizerOptions& options) {
    if (options.kind == "none") {
        if (options.drop_merges)
            throw std::runtime_error("--defect no-merges: needs a tokenizer (small or qwen3)");
        return 0;
    }
    int64_t count = 0;
    if (options.kind == "small") {
        ojson tokenizer = small_tokenizer_json();
        count = token_count(tokenizer);
        write_text(out_dir / "tokenizer_config.json",
                   small_tokenizer_config(tokenizer).dump(2) + "\n");
        if (options.embedding_eos)
            tokenizer["post_processor"] =
                embedding_post_processor(added_token_id(tokenizer, "<|endoftext|>"));
        if (options.drop_merges) tokenizer["model"].erase("merges");
        write_text(out_dir / "tokenizer.json", tokenizer.dump(2) + "\n");
    } else if (options.kind == "qwen3" || options.kind == "llama3" || options.kind == "llama2" ||
               options.kind == "gemma3") {
        const fs::path& source = options.real_tokenizer_json;
        if (source.empty())
            throw std::runtime_error(
                options.kind == "qwen3"
                    ? "--qwen3-tokenizer: no path (pass it or set REBOX_QWEN3_TOKENIZER)"
                    : "--tokenizer-json: no path to the real " + options.kind + " tokenizer.json");
        const std::string source_text = read_file(source);
        const Qwen3Tokenizer processed = process_qwen3(source_text, source, options);
        count = processed.count;
        write_text(out_dir / "tokenizer.json",
                   processed.text.empty() ? source_text : processed.text);
        write_text(out_dir / "tokenizer_config.json",
                   read_file(source.parent_path() / "tokenizer_config.json"));
    } else {
        throw std::runtime_error("--tokenizer: unknown kind '" + options.kind +
                                 "' (expected small, qwen3, llama3, llama2, gemma3 or none)");
    }
    return count;
}

int64_t added_token_id_in_file(const fs::path& tokenizer_json, const std::string& content) {
    simdjson::dom::parser parser;
    const simdjson::padded_string padded(read_file(tokenizer_json));
    simdjson::dom::element doc;
    if (parser.parse(padded).get(doc) != simdjson::SUCCESS) return -1;
    simdjson::dom::array tokens;
    if (doc["added_tokens"].get_array().get(tokens) != simdjson::SUCCESS) return -1;
    for (auto token : tokens) {
        std::string_view text;
        int64_t id = 0;
        if (token["content"].get_string().get(text) == simdjson::SUCCESS && text == content &&
            token["id"].get_int64().get(id) == simdjson::SUCCESS)
            return id;
    }
    return -1;
}

}  // namespace mkfixture
