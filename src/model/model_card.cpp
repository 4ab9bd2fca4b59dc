// README.md front matter -> JSON with PyYAML safe_load's scalar typing (see model_card.hpp).
#include "model/model_card.hpp"

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "model/json_file.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

// Python str.splitlines() line breaks after universal-newline reading: \n, \r\n, \r, \v, \f,
// \x1c-\x1e, and U+0085, U+2028, U+2029 in UTF-8.
std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::string line;
    for (size_t i = 0; i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        size_t extra = 0;  // bytes of a multi-byte break after c
        bool is_break =
            c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e);
        if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x85) {
            is_break = true;
            extra = 1;
        }
        if (c == 0xe2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
            (static_cast<unsigned char>(text[i + 2]) == 0xa8 ||
             static_cast<unsigned char>(text[i + 2]) == 0xa9)) {
            is_break = true;
            extra = 2;
        }
        if (!is_break) {
            line += text[i];
            continue;
        }
        if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') extra = 1;
        i += extra;
        lines.push_back(line);
        line.clear();
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
}

// PyYAML SafeLoader's implicit resolvers for a plain (unquoted, untagged) scalar.
nlohmann::json resolve_plain(const std::string& text) {
    static const std::regex kNull("~|null|Null|NULL|");
    static const std::regex kTrue("yes|Yes|YES|true|True|TRUE|on|On|ON");
    static const std::regex kFalse("no|No|NO|false|False|FALSE|off|Off|OFF");
    static const std::regex kInt(
        "[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|"
        "[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+");
    static const std::regex kFloat(
        "[-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+][0-9]+)?|\\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|"
        "[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN)");
    if (std::regex_match(text, kNull)) return nullptr;
    if (std::regex_match(text, kTrue)) return true;
    if (std::regex_match(text, kFalse)) return false;
    std::string digits;
    for (const char c : text)
        if (c != '_') digits += c;
    // The numbers' values matter only in messages (a number where a string belongs is refused), so
    // sexagesimal and special forms are approximated.
    if (std::regex_match(text, kInt)) {
        int base = 10;
        std::string body = digits;
        const bool negative = !body.empty() && body[0] == '-';
        if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.erase(0, 1);
        if (body.starts_with("0b"))
            base = 2, body.erase(0, 2);
        else if (body.starts_with("0x"))
            base = 16, body.erase(0, 2);
        else if (body.size() > 1 && body[0] == '0')
            base = 8;
        const long long value = std::strtoll(body.c_str(), nullptr, base);
        return negative ? -value : value;
    }
    if (std::regex_match(text, kFloat)) return std::strtod(digits.c_str(), nullptr);
    return text;
}

nlohmann::json to_json(const YAML::Node& node, const std::string& file, int depth) {
    if (depth > 200)
        throw_input_error(file, "front matter", "nested more than 200 levels deep",
                          "a model card's YAML of ordinary depth");
    switch (node.Type()) {
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined:
            return nullptr;
        case YAML::NodeType::Scalar:
            // "?": plain and untagged, typed by the resolvers; quoted ("!") and tagged stay text.
            return node.Tag() == "?" ? resolve_plain(node.Scalar()) : nlohmann::json(node.Scalar());
        case YAML::NodeType::Sequence: {
            nlohmann::json items = nlohmann::json::array();
            for (const YAML::Node& item : node) items.push_back(to_json(item, file, depth + 1));
            return items;
        }
        case YAML::NodeType::Map: {
            nlohmann::json object = nlohmann::json::object();
            for (const auto& entry : node) {
                if (!entry.first.IsScalar()) continue;  // a complex key no lookup can name
                object[entry.first.Scalar()] = to_json(entry.second, file, depth + 1);
            }
            return object;
        }
    }
    return nullptr;
}

}  // namespace

std::string model_card_front_matter(const std::string& readme_text) {
    const std::vector<std::string> lines = split_lines(readme_text);
    if (lines.empty() || lines[0] != "---") return "";
    std::string yaml;
    for (size_t i = 1; i < lines.size() && lines[i] != "---"; ++i) {
        if (i > 1) yaml += '\n';
        yaml += lines[i];
    }
    return yaml + "\n";
}

nlohmann::json parse_model_card(const std::string& readme_text, const std::string& file) {
    std::string yaml = model_card_front_matter(readme_text);
    if (yaml.empty()) return nlohmann::json::object();
    replace_all(yaml, "- no\n", "- \"no\"\n");  // the converter's fix of YAML 1.1's Norway problem
    replace_all(yaml, "\t", "  ");
    YAML::Node document;
    try {
        document = YAML::Load(yaml);
    } catch (const YAML::Exception& e) {
        throw_input_error(
            file, "front matter",
            "is not valid YAML (line " + std::to_string(e.mark.line + 2) + ": " + e.msg + ")",
            "fix the YAML between the '---' lines (llama.cpp's converter fails on "
            "it too)");
    }
    nlohmann::json card = to_json(document, file, 0);
    return card.is_object() ? card : nlohmann::json::object();
}

nlohmann::json read_model_card(const std::filesystem::path& dir) {
    const std::filesystem::path path = dir / "README.md";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return nlohmann::json::object();
    return parse_model_card(detail::read_side_file(path), path.string());
}

}  // namespace rebox
