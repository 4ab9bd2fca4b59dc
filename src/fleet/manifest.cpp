// Parses the batch manifest (see manifest.hpp): header, columns, names, duplicates, options.
#include "fleet/manifest.hpp"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

#include "format/printable.hpp"
#include "rebox/error.hpp"

namespace rebox::fleet {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void bad_line(const fs::path& path, size_t line_number, const std::string& problem,
                           const std::string& expected) {
    throw Error(ExitClass::input, path.string(), "line " + std::to_string(line_number), problem,
                expected);
}

bool name_byte_ok(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

void check_name(const fs::path& path, size_t line_number, const std::string& name) {
    if (name.empty())
        bad_line(path, line_number, "empty output name (column 2)",
                 "a file name such as Qwen3-0.6B-Q4_1");
    if (name.size() > kMaxNameBytes)
        bad_line(path, line_number, "output name of " + std::to_string(name.size()) + " bytes",
                 "at most " + std::to_string(kMaxNameBytes) + " bytes");
    for (char c : name)
        if (!name_byte_ok(c))
            bad_line(path, line_number,
                     "output name '" + detail::printable(name, 80) + "' has the byte '" +
                         detail::printable(std::string(1, c)) + "'",
                     "only letters, digits, '.', '_' and '-': it is a file name inside --out");
    if (name.front() == '.')
        bad_line(path, line_number,
                 "output name '" + detail::printable(name, 80) + "' starts with '.'",
                 "a name that starts with a letter, digit, '_' or '-'");
}

std::vector<std::string> split_options(const std::string& column) {
    std::vector<std::string> words;
    std::string word;
    for (char c : column) {
        if (c == ' ') {
            if (!word.empty()) words.push_back(std::move(word));
            word.clear();
        } else {
            word += c;
        }
    }
    if (!word.empty()) words.push_back(std::move(word));
    return words;
}

std::vector<std::string> split_columns(const std::string& line) {
    std::vector<std::string> columns(1);
    for (char c : line) {
        if (c == '\t')
            columns.emplace_back();
        else
            columns.back() += c;
    }
    return columns;
}

}  // namespace

Manifest parse_manifest(const std::string& text, const fs::path& path) {
    if (text.size() > kMaxManifestBytes)
        throw Error(ExitClass::input, path.string(), "",
                    "manifest of " + std::to_string(text.size()) + " bytes",
                    "at most " + std::to_string(kMaxManifestBytes) + " bytes (split the fleet)");
    Manifest manifest;
    manifest.path = path;
    const fs::path base = path.parent_path();
    std::map<std::string, size_t> line_of_name;
    size_t begin = 0;
    size_t line_number = 0;
    while (begin < text.size()) {
        size_t end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(begin, end - begin);
        begin = end + 1;
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
        if (line.find('\0') != std::string::npos)
            bad_line(path, line_number, "a NUL byte", "a text file (TSV)");
        if (line_number == 1 && !line.empty() && line.front() == '#') continue;  // header
        if (line.empty())
            bad_line(path, line_number, "empty line",
                     "no blank lines: index N is the N-th model line, a blank one would shift "
                     "every index after it");
        if (line.front() == '#')
            bad_line(path, line_number, "a '#' line after the first",
                     "a header only as the first line (indexes count every later line)");
        const std::vector<std::string> columns = split_columns(line);
        if (columns.size() < 2 || columns.size() > 3)
            bad_line(path, line_number,
                     std::to_string(columns.size()) + " tab-separated column" +
                         (columns.size() == 1 ? "" : "s"),
                     "SOURCE_DIR<TAB>NAME or SOURCE_DIR<TAB>NAME<TAB>OPTIONS");
        ManifestEntry entry;
        entry.line_number = line_number;
        if (columns[0].empty())
            bad_line(path, line_number, "empty source dir (column 1)",
                     "a model directory, absolute or relative to the manifest's folder");
        const fs::path source = columns[0];
        entry.source_dir = source.is_absolute() ? source : base / source;
        entry.name = columns[1];
        check_name(path, line_number, entry.name);
        if (const auto [it, fresh] = line_of_name.emplace(entry.name, line_number); !fresh)
            bad_line(
                path, line_number,
                "output name '" + entry.name + "' is also on line " + std::to_string(it->second),
                "one name per line: two indexes would write the same files");
        if (columns.size() == 3) entry.options = split_options(columns[2]);
        manifest.entries.push_back(std::move(entry));
    }
    return manifest;
}

Manifest read_manifest(const fs::path& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        throw Error(ExitClass::input, path.string(), "", "cannot open the manifest",
                    "an existing TSV file");
    if (!S_ISREG(info.st_mode))
        throw Error(ExitClass::input, path.string(), "", "the manifest is not a regular file",
                    "a TSV file");
    if (static_cast<uint64_t>(info.st_size) > kMaxManifestBytes)
        throw Error(ExitClass::input, path.string(), "",
                    "manifest of " + std::to_string(info.st_size) + " bytes",
                    "at most " + std::to_string(kMaxManifestBytes) + " bytes (split the fleet)");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in.good() && !in.eof())
        throw Error(ExitClass::input, path.string(), "", "cannot read the manifest");
    return parse_manifest(text.str(), path);
}

}  // namespace rebox::fleet
