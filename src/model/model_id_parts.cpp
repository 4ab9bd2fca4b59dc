// get_model_id_components / id_to_title of gguf-py's metadata.py, step by step (see the header).
#include "model/model_id_parts.hpp"

#include <cmath>
#include <regex>
#include <set>
#include <vector>

namespace rebox {
namespace {

bool is_ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_ascii_alpha(char c) { return is_ascii_upper(c) || is_ascii_lower(c); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
// Python's isalpha() on a first character: a non-ASCII byte is taken as a letter (names in other
// scripts start with one).
bool starts_alpha(const std::string& s) {
    return !s.empty() && (is_ascii_alpha(s[0]) || static_cast<unsigned char>(s[0]) >= 0x80);
}
bool is_whitespace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Python str.islower(): some cased letter and none upper case.
bool python_islower(const std::string& s) {
    bool cased = false;
    for (const char c : s) {
        if (is_ascii_upper(c)) return false;
        if (is_ascii_lower(c)) cased = true;
    }
    return cased;
}

bool full_match_icase(const std::string& text, const char* pattern) {
    return std::regex_match(text, std::regex(pattern, std::regex::ECMAScript | std::regex::icase));
}

std::vector<std::string> split_words(const std::string& text) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : text) {
        if (is_whitespace(c)) {
            if (!word.empty()) words.push_back(word);
            word.clear();
        } else {
            word += c;
        }
    }
    if (!word.empty()) words.push_back(word);
    return words;
}

// float(text) for what the size pattern leaves before its suffix: digits with at most one '.'.
std::optional<double> python_float(const std::string& text) {
    if (!std::regex_match(text, std::regex(R"(\d+(\.\d+)?)"))) return std::nullopt;
    return std::strtod(text.c_str(), nullptr);
}

std::optional<std::string> joined(const std::vector<std::string>& parts,
                                  const std::vector<std::set<std::string>>& types,
                                  const std::string& wanted, const std::string& unwanted = "") {
    std::string out;
    std::set<std::string> seen;  // size labels are deduplicated, first occurrence kept
    for (size_t i = 0; i < parts.size(); ++i) {
        if (!types[i].count(wanted) || (!unwanted.empty() && types[i].count(unwanted))) continue;
        if (wanted == "size_label" && !seen.insert(parts[i]).second) continue;
        if (!out.empty()) out += '-';
        out += parts[i];
    }
    if (out.empty()) return std::nullopt;
    return out;
}

// A size part ("7B", "0.6b", "8x7B", "7b1", "small"): normalized, and "finetune" instead of
// "size_label" when total_params says it is not the model's size (a context length, "32k").
void annotate_size(std::string& part, std::set<std::string>& type, int64_t total_params) {
    for (char& c : part)
        if (c == '_') c = '.';
    if (is_digit(part.back()))  // bloom-7b1 notation: "7b1" -> "7.1b"
        part = part.substr(0, part.size() - 2) + "." + part.back() + part[part.size() - 2];
    if (part.size() > 1 && is_digit(part[part.size() - 2])) {
        char& suffix = part.back();
        if (suffix == 'k' || suffix == 'm' || suffix == 'b' || suffix == 't')
            suffix = static_cast<char>(suffix - 'a' + 'A');
    }
    if (total_params != 0) {
        if (const auto number = python_float(part.substr(0, part.size() - 1))) {
            static const std::string kScales = " KMBT";
            const size_t scale = kScales.find(part.back());
            const double multiplier =
                scale == std::string::npos ? 0.001 : std::pow(1000.0, static_cast<double>(scale));
            const double label_params = *number * multiplier;
            const bool far = total_params < 0
                                 ? label_params < static_cast<double>((-total_params) / 8)
                                 : std::fabs(label_params - static_cast<double>(total_params)) >
                                       static_cast<double>(7 * total_params / 8);
            if (far) {
                type.insert("finetune");
                char& suffix = part.back();
                if (is_ascii_upper(suffix)) suffix = static_cast<char>(suffix - 'A' + 'a');
            }
        }
    }
    if (type.empty()) type.insert("size_label");
}

}  // namespace

std::string python_title(const std::string& text) {
    std::string out = text;
    bool previous_cased = false;
    for (char& c : out) {
        if (is_ascii_alpha(c)) {
            if (previous_cased && is_ascii_upper(c)) c = static_cast<char>(c - 'A' + 'a');
            if (!previous_cased && is_ascii_lower(c)) c = static_cast<char>(c - 'a' + 'A');
            previous_cased = true;
        } else {
            previous_cased = false;
        }
    }
    return out;
}

std::string id_to_title(const std::string& id) {
    std::string spaced = id;
    for (char& c : spaced)
        if (c == '-') c = ' ';
    std::string out;
    static const std::regex kKeepCase(R"(v\d+(\.\d+)*|\d.*)");
    for (const std::string& word : split_words(spaced)) {
        if (!out.empty()) out += ' ';
        const bool keep = !python_islower(word) || std::regex_match(word, kKeepCase);
        out += keep ? word : python_title(word);
    }
    return out;
}

ModelIdParts model_id_parts(const std::optional<std::string>& model_id, int64_t total_params) {
    ModelIdParts parts;
    if (!model_id) return parts;
    const std::string& id = *model_id;
    if (id.find(' ') != std::string::npos) {  // a sentence: a plain name
        parts.full_name = id;
        return parts;
    }
    std::string full;
    if (const size_t slash = id.find('/'); slash != std::string::npos) {
        parts.organization = id.substr(0, slash);
        full = id.substr(slash + 1);
    } else {
        full = id;
    }
    if (parts.organization && !parts.organization->empty() && (*parts.organization)[0] == '.')
        parts.organization.reset();  // "./" or "../", not an organization
    parts.full_name = full;

    std::vector<std::string> name_parts;
    {
        std::string piece;
        for (const char c : full + '-') {
            if (c != '-') {
                piece += c;
            } else if (!piece.empty()) {
                name_parts.push_back(piece);
                piece.clear();
            }
        }
    }
    std::vector<std::set<std::string>> types(name_parts.size());
    for (size_t i = 0; i < name_parts.size(); ++i) {
        std::string& part = name_parts[i];
        if (full_match_icase(part, R"((v|iter)?\d+([.]\d+)*)")) {
            types[i].insert("version");
        } else if (full_match_icase(part, R"(i?q\d(_\w)*|b?fp?(16|32))")) {
            types[i].insert("type");
            for (char& c : part)
                if (is_ascii_lower(c)) c = static_cast<char>(c - 'a' + 'A');
        } else if (i > 0 &&
                   full_match_icase(
                       part,
                       R"((([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl))")) {
            annotate_size(part, types[i], total_params);
        } else if (i > 0 && full_match_icase(part, "chat|instruct|vision|lora")) {
            types[i].insert("finetune");
        }
    }
    // Word sizes ("small") are dropped when a numeric size is there too.
    bool numeric_size = false;
    for (size_t i = 0; i < name_parts.size(); ++i)
        if (types[i].count("size_label"))
            for (const char c : name_parts[i]) numeric_size = numeric_size || is_digit(c);
    if (numeric_size)
        for (size_t i = 0; i < name_parts.size(); ++i) {
            bool all_alpha = true;
            for (const char c : name_parts[i]) all_alpha = all_alpha && is_ascii_alpha(c);
            if (types[i].count("size_label") && all_alpha) types[i].erase("size_label");
        }
    bool at_start = true;
    for (size_t i = 0; i < name_parts.size(); ++i) {
        if (at_start &&
            ((types[i].empty() && starts_alpha(name_parts[i])) || types[i].count("version"))) {
            types[i].insert("basename");
        } else {
            at_start = false;
            if (types[i].empty()) types[i].insert("finetune");
        }
    }
    for (size_t i = name_parts.size(); i-- > 0;) {  // a trailing version is not the basename
        if (types[i].count("basename") && types[i].size() > 1)
            types[i].erase("basename");
        else
            break;
    }
    parts.basename = joined(name_parts, types, "basename");
    parts.size_label = joined(name_parts, types, "size_label");
    parts.finetune = joined(name_parts, types, "finetune");
    parts.version = joined(name_parts, types, "version", "basename");
    if (!parts.size_label && !parts.finetune && !parts.version) parts.basename.reset();
    return parts;
}

}  // namespace rebox
