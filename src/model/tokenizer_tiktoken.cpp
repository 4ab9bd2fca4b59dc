// tiktoken.model -> the GGUF tokenizer (tokenizer_tiktoken.hpp).
#include "model/tokenizer_tiktoken.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "json_file.hpp"
#include "model/tokenizer_special.hpp"
#include "model/tokenizer_unigram.hpp"
#include "rebox/error.hpp"

namespace rebox {

const std::string_view kKimiK2PatStr =
    R"([\p{Han}]+|)"
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"(\p{N}{1,3}|)"
    R"( ?[^\s\p{L}\p{N}]+[\r\n]*|)"
    R"(\s*[\r\n]+|)"
    R"(\s+(?!\S)|)"
    R"(\s+)";

namespace {

constexpr const char* kTiktokenFile = "tiktoken.model";
constexpr const char* kKimiPy = "tokenization_kimi.py";

[[noreturn]] void tt_bad_line(const std::string& file, size_t line, const std::string& what,
                              const std::string& expected) {
    throw_input_error(file, "line " + std::to_string(line), what, expected);
}

int tt_base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Canonical standard base64: tokenizer_unigram's decode_base64 (RFC 4648, '=' padding) with the
// bits the padding drops zero and at least one byte; nullopt for anything else.
std::optional<std::string> tt_decode_base64(std::string_view text) {
    const std::optional<std::vector<uint8_t>> bytes = detail::decode_base64(text);
    if (!bytes || bytes->empty()) return std::nullopt;
    const size_t pad = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
    if (pad == 2 && (tt_base64_value(text[text.size() - 3]) & 0x0f) != 0) return std::nullopt;
    if (pad == 1 && (tt_base64_value(text[text.size() - 2]) & 0x03) != 0) return std::nullopt;
    return std::string(bytes->begin(), bytes->end());
}

bool tt_is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

// The Python source's `NAME = ` assignment at the start of a line (after indentation); npos when
// absent.
size_t tt_find_assignment(std::string_view source, std::string_view name) {
    size_t pos = 0;
    while ((pos = source.find(name, pos)) != std::string_view::npos) {
        size_t start = pos;
        while (start > 0 && tt_is_space(source[start - 1])) --start;
        size_t after = pos + name.size();
        while (after < source.size() && tt_is_space(source[after])) ++after;
        if ((start == 0 || source[start - 1] == '\n') && after < source.size() &&
            source[after] == '=' && (after + 1 >= source.size() || source[after + 1] != '=')) {
            ++after;
            while (after < source.size() && tt_is_space(source[after])) ++after;
            return after;
        }
        pos += name.size();
    }
    return std::string_view::npos;
}

void tt_skip_blank(std::string_view source, size_t& pos) {
    while (pos < source.size()) {
        const char c = source[pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            ++pos;
        } else if (c == '#') {
            while (pos < source.size() && source[pos] != '\n') ++pos;
        } else {
            break;
        }
    }
}

// A raw string literal (r"""...""", r'''...''', r"..." or r'...') at pos; advances past it.
std::optional<std::string> tt_raw_literal(std::string_view source, size_t& pos) {
    if (pos >= source.size() || (source[pos] != 'r' && source[pos] != 'R')) return std::nullopt;
    size_t at = pos + 1;
    for (const std::string_view quote : {"\"\"\"", "'''", "\"", "'"}) {
        if (source.substr(at, quote.size()) != quote) continue;
        const size_t begin = at + quote.size();
        const size_t end = source.find(quote, begin);
        if (end == std::string_view::npos) return std::nullopt;
        const std::string_view body = source.substr(begin, end - begin);
        if (quote.size() == 1 && body.find('\n') != std::string_view::npos) return std::nullopt;
        pos = end + quote.size();
        return std::string(body);
    }
    return std::nullopt;
}

// TikTokenTokenizer.pat_str: `"|".join([r"""...""", ...])` or one raw literal.
std::optional<std::string> kimi_pat_str(std::string_view source) {
    size_t pos = tt_find_assignment(source, "pat_str");
    if (pos == std::string_view::npos) return std::nullopt;
    if (auto single = tt_raw_literal(source, pos)) return single;
    constexpr std::string_view kJoin = "\"|\".join(";
    if (source.substr(pos, kJoin.size()) != kJoin) return std::nullopt;
    pos += kJoin.size();
    tt_skip_blank(source, pos);
    if (pos >= source.size() || source[pos] != '[') return std::nullopt;
    ++pos;
    std::string joined;
    bool first = true;
    for (;;) {
        tt_skip_blank(source, pos);
        if (pos < source.size() && source[pos] == ']') break;
        auto part = tt_raw_literal(source, pos);
        if (!part) return std::nullopt;
        if (!first) joined += '|';
        joined += *part;
        first = false;
        tt_skip_blank(source, pos);
        if (pos < source.size() && source[pos] == ',') ++pos;
    }
    ++pos;
    tt_skip_blank(source, pos);
    if (first || pos >= source.size() || source[pos] != ')') return std::nullopt;
    return joined;
}

std::optional<uint32_t> kimi_reserved_count(std::string_view source) {
    const size_t pos = tt_find_assignment(source, "num_reserved_special_tokens");
    if (pos == std::string_view::npos) return std::nullopt;
    uint32_t value = 0;
    const char* begin = source.data() + pos;
    const char* end = source.data() + source.size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || ptr == begin || value > (1u << 20)) return std::nullopt;
    if (ptr != end && *ptr != '\n' && *ptr != '\r' && !tt_is_space(*ptr) && *ptr != '#')
        return std::nullopt;
    return value;
}

[[noreturn]] void kimi_blocker(const std::string& field, const std::string& what,
                               const std::string& fix) {
    throw Error(ExitClass::blocker, kKimiPy, field, what, fix);
}

// GPT-2's bytes_to_unicode: the printable Latin-1 bytes stand for themselves, the others for
// U+0100 onwards in byte order.
std::array<uint16_t, 256> tt_byte_code_points() {
    std::array<uint16_t, 256> table{};
    uint16_t next = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable =
            (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        table[b] = printable ? static_cast<uint16_t>(b) : next++;
    }
    return table;
}

void tt_append_utf8(std::string& out, uint16_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else {  // every code point here is below U+0800
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

}  // namespace

TiktokenRanks parse_tiktoken_ranks(std::string_view text, const std::string& file) {
    TiktokenRanks out;
    std::vector<std::pair<std::string, uint32_t>> entries;
    std::vector<size_t> entry_line;
    size_t line_no = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = pos;
        while (end < text.size() && text[end] != '\n' && text[end] != '\r') ++end;
        const std::string_view line = text.substr(pos, end - pos);
        ++line_no;
        if (end < text.size() && text[end] == '\r' && end + 1 < text.size() &&
            text[end + 1] == '\n')
            ++end;
        pos = end + 1;
        if (line.empty()) continue;
        if (line.size() > kMaxTiktokenLine)
            tt_bad_line(file, line_no, "is " + std::to_string(line.size()) + " bytes long",
                        "at most " + std::to_string(kMaxTiktokenLine) + " bytes: BASE64 RANK");
        std::vector<std::string_view> fields;
        size_t at = 0;
        while (at < line.size()) {
            while (at < line.size() && tt_is_space(line[at])) ++at;
            if (at == line.size()) break;
            size_t stop = at;
            while (stop < line.size() && !tt_is_space(line[stop])) ++stop;
            fields.push_back(line.substr(at, stop - at));
            at = stop;
        }
        if (fields.size() != 2)
            tt_bad_line(file, line_no, "has " + std::to_string(fields.size()) + " fields",
                        "BASE64 RANK");
        auto bytes = tt_decode_base64(fields[0]);
        if (!bytes)
            tt_bad_line(file, line_no, "token '" + std::string(fields[0]) + "' is not base64",
                        "the standard base64 of a non-empty byte string");
        uint32_t rank = 0;
        const char* rank_end = fields[1].data() + fields[1].size();
        const auto [ptr, ec] = std::from_chars(fields[1].data(), rank_end, rank);
        if (ec != std::errc() || ptr != rank_end || fields[1].empty())
            tt_bad_line(file, line_no, "rank '" + std::string(fields[1]) + "' is not a number",
                        "a decimal rank below 2^32");
        entries.emplace_back(std::move(*bytes), rank);
        entry_line.push_back(line_no);
    }
    if (entries.empty()) throw_input_error(file, "", "holds no ranks", "BASE64 RANK lines");
    const size_t n = entries.size();
    std::vector<size_t> rank_line(n, 0);  // the line each rank < n was given on
    std::unordered_map<std::string_view, size_t> by_bytes;
    by_bytes.reserve(n);
    for (size_t k = 0; k < n; ++k) {
        const auto& [bytes, rank] = entries[k];
        if (rank >= n) {
            // n distinct ranks not all below n: some rank below n is missing.
            size_t missing = 0;
            std::vector<uint8_t> seen(n, 0);
            for (const auto& entry : entries)
                if (entry.second < n) seen[entry.second] = 1;
            while (missing < n && seen[missing]) ++missing;
            tt_bad_line(file, entry_line[k],
                        "rank " + std::to_string(rank) + " leaves a gap: rank " +
                            std::to_string(missing) + " is missing",
                        "ranks 0 .. " + std::to_string(n - 1) + ", each once");
        }
        if (rank_line[rank] != 0)
            tt_bad_line(file, entry_line[k],
                        "rank " + std::to_string(rank) + " is given twice (first on line " +
                            std::to_string(rank_line[rank]) + ")",
                        "each rank once");
        rank_line[rank] = entry_line[k];
        const auto [it, inserted] = by_bytes.emplace(bytes, k);
        if (!inserted)
            tt_bad_line(file, entry_line[k],
                        "token " + std::string(1, '\'') + tiktoken_token_text(bytes) +
                            "' is given twice (first on line " +
                            std::to_string(entry_line[it->second]) + ")",
                        "each byte string once");
    }
    out.tokens.resize(n);
    out.file_order.reserve(n);
    for (auto& entry : entries) {
        out.file_order.push_back(entry.second);
        out.tokens[entry.second] = std::move(entry.first);
    }
    return out;
}

std::string tiktoken_token_text(std::string_view bytes) {
    static const std::array<uint16_t, 256> table = tt_byte_code_points();
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const char c : bytes) tt_append_utf8(out, table[static_cast<uint8_t>(c)]);
    return out;
}

std::vector<std::string> tiktoken_merges(const TiktokenRanks& ranks) {
    std::unordered_map<std::string_view, uint32_t> rank_of;
    rank_of.reserve(ranks.tokens.size());
    for (uint32_t r = 0; r < ranks.tokens.size(); ++r) rank_of.emplace(ranks.tokens[r], r);
    std::vector<std::string> merges;
    std::vector<std::string_view> parts;
    for (const uint32_t rank : ranks.file_order) {
        const std::string_view token = ranks.tokens[rank];
        if (token.size() == 1) continue;
        parts.clear();
        for (size_t i = 0; i < token.size(); ++i) parts.push_back(token.substr(i, 1));
        // QwenModel.bpe(mergeable_ranks, token, max_rank=rank): merge the lowest-ranked adjacent
        // pair (the first on a tie) while its rank is below the token's own.
        for (;;) {
            std::optional<size_t> best;
            uint32_t best_rank = 0;
            for (size_t i = 0; i + 1 < parts.size(); ++i) {
                const std::string_view pair(parts[i].data(), parts[i].size() + parts[i + 1].size());
                const auto it = rank_of.find(pair);
                if (it != rank_of.end() && (!best || it->second < best_rank)) {
                    best = i;
                    best_rank = it->second;
                }
            }
            if (!best || best_rank >= rank) break;
            parts[*best] = std::string_view(parts[*best].data(),
                                            parts[*best].size() + parts[*best + 1].size());
            parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(*best) + 1);
        }
        if (parts.size() == 2)
            merges.push_back(tiktoken_token_text(parts[0]) + " " + tiktoken_token_text(parts[1]));
    }
    return merges;
}

TokenizerVocab read_tiktoken_tokenizer(const std::filesystem::path& model_dir,
                                       const TokenizerOptions& options) {
    const std::filesystem::path tiktoken_path = model_dir / kTiktokenFile;
    detail::check_file_size(tiktoken_path, kMaxTiktokenBytes);
    const std::string text = detail::read_side_file(tiktoken_path);
    const TiktokenRanks ranks = parse_tiktoken_ranks(text, kTiktokenFile);

    const std::filesystem::path py_path = model_dir / kKimiPy;
    const std::string fix_py =
        "put the model's own tokenization_kimi.py (its tokenizer_config.json auto_map names it) "
        "into " +
        model_dir.string();
    if (!std::filesystem::is_regular_file(py_path))
        kimi_blocker("", "missing: llama.cpp's converter builds the tiktoken vocabulary through it",
                     fix_py);
    const std::string source = detail::read_side_file(py_path);
    const auto reserved = kimi_reserved_count(source);
    if (!reserved)
        kimi_blocker("num_reserved_special_tokens", "not found as a class-level integer", fix_py);

    TokenizerVocab vocab;
    vocab.model = "gpt2";
    if (options.pre) {
        vocab.pre = *options.pre;
    } else {
        const auto pat = kimi_pat_str(source);
        if (!pat) kimi_blocker("pat_str", "not found as raw string literals", fix_py);
        if (*pat != kKimiK2PatStr)
            kimi_blocker("pat_str",
                         "is not Kimi-K2's split pattern, the one llama.cpp's \"kimi-k2\" "
                         "pre-tokenizer implements",
                         "--tokenizer-pre NAME naming llama.cpp's pre-tokenizer for it");
        vocab.pre = "kimi-k2";
    }

    // TikTokenTokenizer.__init__: special tokens at n .. n + reserved + 1, named by
    // added_tokens_decoder, else <|reserved_token_ID|>.
    const uint64_t n = ranks.tokens.size();
    const uint64_t special_end = n + *reserved + 2;
    std::unordered_map<uint64_t, std::string> named;
    const std::filesystem::path config_path = model_dir / "tokenizer_config.json";
    if (std::filesystem::exists(config_path)) {
        const nlohmann::json config = detail::read_json_object(config_path);
        const auto decoder = config.find("added_tokens_decoder");
        if (decoder != config.end() && !decoder->is_null()) {
            if (!decoder->is_object())
                throw_input_error("tokenizer_config.json", "added_tokens_decoder",
                                  "is not an object", "{\"ID\": {\"content\": ...}}");
            for (const auto& [key, entry] : decoder->items()) {
                const std::string field = "added_tokens_decoder." + key;
                uint64_t id = 0;
                const auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
                if (ec != std::errc() || ptr != key.data() + key.size() || key.empty())
                    throw_input_error("tokenizer_config.json", field, "the key is not a token id",
                                      "a decimal id");
                const auto content = entry.is_object() ? entry.find("content") : entry.end();
                if (!entry.is_object() || content == entry.end() || !content->is_string())
                    throw_input_error("tokenizer_config.json", field, "has no string content",
                                      "{\"content\": TOKEN, ...}");
                named[id] = content->get<std::string>();
            }
        }
    }
    // {**vocab, **special_tokens}: the spelled ranks, then the specials by content (a later entry
    // with the same string takes it over).
    std::unordered_map<std::string, uint64_t> id_of;
    id_of.reserve(special_end);
    for (uint64_t r = 0; r < n; ++r) id_of[tiktoken_token_text(ranks.tokens[r])] = r;
    std::unordered_map<std::string, uint64_t> specials;
    for (uint64_t id = n; id < special_end; ++id) {
        const auto it = named.find(id);
        specials[it != named.end() ? it->second : "<|reserved_token_" + std::to_string(id) + "|>"] =
            id;
    }
    std::vector<uint8_t> is_special(special_end, 0);
    for (const auto& [content, id] : specials) {
        id_of[content] = id;
        is_special[id] = 1;
    }

    const uint64_t vocab_size = options.vocab_size != 0 ? options.vocab_size : special_end;
    if (vocab_size < n)
        throw Error(ExitClass::blocker, "config.json", "vocab_size",
                    "is " + std::to_string(vocab_size) + " but tiktoken.model holds " +
                        std::to_string(n) + " ranks",
                    "the config.json that belongs to this tiktoken.model");
    vocab.tokens.assign(vocab_size, std::string());
    vocab.token_types.assign(vocab_size, static_cast<int32_t>(TokenType::UNUSED));
    std::vector<uint8_t> placed(vocab_size, 0);
    for (auto& [content, id] : id_of) {
        if (id >= vocab_size) continue;
        vocab.tokens[id] = content;
        placed[id] = 1;
        vocab.token_types[id] = static_cast<int32_t>(
            id < special_end && is_special[id] ? TokenType::CONTROL : TokenType::NORMAL);
    }
    for (uint64_t id = 0; id < vocab_size; ++id) {
        if (placed[id]) continue;
        vocab.tokens[id] = "[PAD" + std::to_string(id) + "]";
        vocab.token_types[id] = static_cast<int32_t>(TokenType::UNUSED);
    }
    vocab.merges = tiktoken_merges(ranks);
    detail::apply_special_tokens(model_dir, detail::TokenizerJsonSpecials{}, options.config, vocab);
    return vocab;
}

}  // namespace rebox
