// verify's own reading of a tiktoken vocabulary (Kimi-K2's tiktoken.model, tokenization_kimi.py,
// tokenizer_config.json), written from tiktoken's load_tiktoken_bpe, Kimi's TikTokenTokenizer and
// DeepseekV2Model.set_vocab's kimi-k2 branch, not from src/model/: the ranks, the tokens spelled
// through GPT-2's byte table, the merges found by re-running BPE on each token's bytes below its
// own rank, the special tokens after the ranks, and gguf-py's SpecialVocab without tokenizer.json.
#include <array>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>

#include "rebox/error.hpp"
#include "verify/tokenizer/ref_tokenizer.hpp"

namespace rebox::verify_ref {
namespace {

using nlohmann::json;

[[noreturn]] void tk_fail(const std::filesystem::path& file, const std::string& key,
                          const std::string& what) {
    throw Error(ExitClass::input, file.string(), key, what);
}

std::string tk_slurp(const std::filesystem::path& path, uintmax_t cap) {
    std::error_code error;
    const uintmax_t bytes = std::filesystem::file_size(path, error);
    if (error) tk_fail(path, "", "cannot read file (" + error.message() + ")");
    if (bytes > cap) tk_fail(path, "", std::to_string(bytes) + " bytes is over verify's cap");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    if (!in && !in.eof()) tk_fail(path, "", "cannot read file");
    return out.str();
}

// Python's bytes_to_unicode, as a list: bs holds the bytes that keep their own code point, the
// rest follow from 256 on.
std::array<std::string, 256> tk_byte_spellings() {
    std::vector<int> bs;
    for (int b = 0x21; b <= 0x7e; ++b) bs.push_back(b);
    for (int b = 0xa1; b <= 0xac; ++b) bs.push_back(b);
    for (int b = 0xae; b <= 0xff; ++b) bs.push_back(b);
    std::array<int, 256> code{};
    code.fill(-1);
    for (const int b : bs) code[b] = b;
    int extra = 0;
    for (int b = 0; b < 256; ++b)
        if (code[b] < 0) code[b] = 256 + extra++;
    std::array<std::string, 256> out;
    for (int b = 0; b < 256; ++b) {
        const int c = code[b];
        std::string s;
        if (c < 0x80) {
            s += static_cast<char>(c);
        } else {
            s += static_cast<char>(0xc0 | (c >> 6));
            s += static_cast<char>(0x80 | (c & 0x3f));
        }
        out[b] = s;
    }
    return out;
}

std::string tk_spell(const std::string& bytes) {
    static const std::array<std::string, 256> table = tk_byte_spellings();
    std::string out;
    for (const unsigned char b : bytes) out += table[b];
    return out;
}

// Strict base64 (padding required, unused bits zero); false when the text is not that.
bool tk_unbase64(const std::string& text, std::string& out) {
    static const std::string alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.clear();
    if (text.empty() || text.size() % 4 != 0) return false;
    uint32_t acc = 0;
    int bits = 0;
    size_t padding = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '=') {
            if (i + 2 < text.size()) return false;
            ++padding;
            continue;
        }
        if (padding != 0) return false;
        const size_t v = alphabet.find(text[i]);
        if (v == std::string::npos) return false;
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
            acc &= (1u << bits) - 1;
        }
    }
    if (padding > 2 || acc != 0) return false;
    return !out.empty();
}

struct TkRanks {
    std::vector<std::string> by_rank;  // byte strings
    std::vector<size_t> order;         // ranks in file order
};

TkRanks tk_load_ranks(const std::filesystem::path& path) {
    const std::string text = tk_slurp(path, uintmax_t{64} << 20);
    std::map<std::string, size_t> bytes_line;
    std::map<uint64_t, std::pair<std::string, size_t>> rank_entry;  // rank -> bytes, line
    std::vector<uint64_t> order;
    std::istringstream lines(text);
    std::string line;
    size_t number = 0;
    while (std::getline(lines, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const std::string key = "line " + std::to_string(number);
        if (line.size() > 4096) tk_fail(path, key, "longer than 4096 bytes");
        std::istringstream fields(line);
        std::string token, rank_text, more;
        fields >> token >> rank_text;
        if (token.empty() || rank_text.empty() || (fields >> more))
            tk_fail(path, key, "not \"BASE64 RANK\"");
        std::string bytes;
        if (!tk_unbase64(token, bytes)) tk_fail(path, key, "the token is not base64");
        if (rank_text.find_first_not_of("0123456789") != std::string::npos || rank_text.size() > 10)
            tk_fail(path, key, "the rank is not a decimal number");
        const uint64_t rank = std::stoull(rank_text);
        if (rank_entry.count(rank)) tk_fail(path, key, "rank " + rank_text + " given twice");
        if (bytes_line.count(bytes)) tk_fail(path, key, "a token given twice");
        bytes_line[bytes] = number;
        rank_entry[rank] = {bytes, number};
        order.push_back(rank);
    }
    if (rank_entry.empty()) tk_fail(path, "", "no ranks");
    TkRanks out;
    uint64_t expect = 0;
    for (auto& [rank, entry] : rank_entry) {
        if (rank != expect)
            tk_fail(path, "line " + std::to_string(entry.second),
                    "rank " + std::to_string(expect) + " is missing");
        out.by_rank.push_back(entry.first);
        ++expect;
    }
    out.order.assign(order.begin(), order.end());
    return out;
}

// The pieces of `pat_str = "|".join([ ... ])`: every r"""...""" between the assignment and the
// closing bracket, joined by '|'; or a single raw literal on the assignment's line.
std::optional<std::string> tk_pattern_of(const std::string& source) {
    std::istringstream in(source);
    std::string line;
    bool inside = false;
    std::string joined;
    int pieces = 0;
    while (std::getline(in, line)) {
        const size_t first = line.find_first_not_of(" \t");
        if (first == std::string::npos) continue;
        const std::string body = line.substr(first);
        if (!inside) {
            if (body.rfind("pat_str", 0) != 0) continue;
            const size_t eq = body.find('=');
            if (eq == std::string::npos ||
                body.substr(7, eq - 7).find_first_not_of(' ') != std::string::npos)
                continue;
            const std::string rhs = body.substr(eq + 1);
            const size_t r = rhs.find("r\"\"\"");
            if (rhs.find("\"|\".join") == std::string::npos) {
                if (r == std::string::npos) return std::nullopt;
                const size_t end = rhs.find("\"\"\"", r + 4);
                if (end == std::string::npos) return std::nullopt;
                return rhs.substr(r + 4, end - r - 4);
            }
            inside = true;
            continue;
        }
        if (body[0] == ']') return pieces > 0 ? std::optional<std::string>(joined) : std::nullopt;
        if (body[0] == '[' || body[0] == '#') continue;
        if (body.rfind("r\"\"\"", 0) != 0) return std::nullopt;
        const size_t end = body.find("\"\"\"", 4);
        if (end == std::string::npos) return std::nullopt;
        if (pieces++ > 0) joined += '|';
        joined += body.substr(4, end - 4);
    }
    return std::nullopt;
}

// tokenization_kimi.py's Kimi-K2 pattern, alternative by alternative.
const std::vector<std::string>& kimi_alternatives() {
    static const std::vector<std::string> parts = {
        R"([\p{Han}]+)",
        R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)",
        R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)",
        R"(\p{N}{1,3})",
        R"( ?[^\s\p{L}\p{N}]+[\r\n]*)",
        R"(\s*[\r\n]+)",
        R"(\s+(?!\S))",
        R"(\s+)",
    };
    return parts;
}

std::optional<uint64_t> tk_reserved_of(const std::string& source) {
    std::istringstream in(source);
    std::string line;
    while (std::getline(in, line)) {
        const size_t first = line.find_first_not_of(" \t");
        if (first == std::string::npos) continue;
        std::string body = line.substr(first);
        const std::string name = "num_reserved_special_tokens";
        if (body.rfind(name, 0) != 0) continue;
        body = body.substr(name.size());
        const size_t eq = body.find_first_not_of(' ');
        if (eq == std::string::npos || body[eq] != '=' || body[eq + 1] == '=') continue;
        const size_t digits = body.find_first_not_of(' ', eq + 1);
        if (digits == std::string::npos) return std::nullopt;
        const size_t stop = body.find_first_not_of("0123456789", digits);
        const std::string number = body.substr(digits, stop - digits);
        if (number.empty() || number.size() > 7) return std::nullopt;
        return std::stoull(number);
    }
    return std::nullopt;
}

}  // namespace

RefTokenizer read_ref_tiktoken(const std::filesystem::path& model_dir, uint64_t vocab_size) {
    const TkRanks ranks = tk_load_ranks(model_dir / "tiktoken.model");
    const std::filesystem::path py = model_dir / "tokenization_kimi.py";
    if (!std::filesystem::is_regular_file(py)) tk_fail(py, "", "missing");
    const std::string source = tk_slurp(py, uintmax_t{16} << 20);
    const auto reserved = tk_reserved_of(source);
    if (!reserved) tk_fail(py, "num_reserved_special_tokens", "not found");

    RefTokenizer out;
    out.present = true;
    out.model = "gpt2";
    std::string kimi;
    for (const std::string& part : kimi_alternatives()) kimi += (kimi.empty() ? "" : "|") + part;
    const auto pattern = tk_pattern_of(source);
    if (pattern && *pattern == kimi)
        out.pre = "kimi-k2";
    else
        out.pre_problem = "tokenization_kimi.py's pat_str is not Kimi-K2's";

    // Merges: BPE of each multi-byte token over its own bytes, only merges ranked below it.
    std::unordered_map<std::string, uint64_t> rank_of;
    for (uint64_t r = 0; r < ranks.by_rank.size(); ++r) rank_of[ranks.by_rank[r]] = r;
    for (const size_t rank : ranks.order) {
        const std::string& token = ranks.by_rank[rank];
        if (token.size() < 2) continue;
        std::vector<std::string> parts;
        for (const char c : token) parts.emplace_back(1, c);
        while (parts.size() > 1) {
            size_t at = parts.size();
            uint64_t lowest = rank;
            for (size_t i = 0; i + 1 < parts.size(); ++i) {
                const auto found = rank_of.find(parts[i] + parts[i + 1]);
                if (found != rank_of.end() && found->second < lowest) {
                    lowest = found->second;
                    at = i;
                }
            }
            if (at == parts.size()) break;
            parts[at] += parts[at + 1];
            parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
        }
        if (parts.size() == 2) out.merges.push_back(tk_spell(parts[0]) + " " + tk_spell(parts[1]));
    }

    // TikTokenTokenizer's special tokens, then {**vocab, **special_tokens} reversed.
    const uint64_t base = ranks.by_rank.size();
    std::map<uint64_t, std::string> decoder;
    if (std::filesystem::is_regular_file(model_dir / "tokenizer_config.json")) {
        const std::filesystem::path config_path = model_dir / "tokenizer_config.json";
        json config;
        try {
            config = json::parse(tk_slurp(config_path, uintmax_t{64} << 20));
        } catch (const json::exception& e) {
            tk_fail(config_path, "", e.what());
        }
        if (config.is_object() && config.contains("added_tokens_decoder") &&
            config["added_tokens_decoder"].is_object()) {
            for (auto it = config["added_tokens_decoder"].begin();
                 it != config["added_tokens_decoder"].end(); ++it) {
                const std::string& key = it.key();
                if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos ||
                    key.size() > 12 || !it->is_object() || !it->contains("content") ||
                    !(*it)["content"].is_string())
                    tk_fail(config_path, "added_tokens_decoder." + key, "not an id -> {content}");
                decoder[std::stoull(key)] = (*it)["content"].get<std::string>();
            }
        }
    }
    std::map<std::string, uint64_t> merged;
    for (uint64_t r = 0; r < base; ++r) merged[tk_spell(ranks.by_rank[r])] = r;
    std::map<std::string, uint64_t> specials;
    for (uint64_t id = base; id < base + *reserved + 2; ++id)
        specials[decoder.count(id) ? decoder[id]
                                   : "<|reserved_token_" + std::to_string(id) + "|>"] = id;
    std::set<uint64_t> control;
    for (const auto& entry : specials) {
        merged[entry.first] = entry.second;
        control.insert(entry.second);
    }
    std::map<uint64_t, std::string> reverse;
    for (const auto& entry : merged) reverse[entry.second] = entry.first;

    const uint64_t size = vocab_size != 0 ? vocab_size : base + *reserved + 2;
    if (size > kMaxRefVocab) tk_fail(model_dir / "config.json", "vocab_size", "over verify's cap");
    RefVocab vocab;
    for (uint64_t id = 0; id < size; ++id) {
        const auto found = reverse.find(id);
        if (found == reverse.end()) {
            vocab.tokens.push_back("[PAD" + std::to_string(id) + "]");
            vocab.token_types.push_back(kTokenUnused);
        } else {
            vocab.tokens.push_back(found->second);
            vocab.token_types.push_back(control.count(id) ? kTokenControl : kTokenNormal);
        }
    }
    detail::derive_ref_specials(nullptr, {}, model_dir, false, vocab);
    out.vocab = std::move(vocab);
    return out;
}

}  // namespace rebox::verify_ref
