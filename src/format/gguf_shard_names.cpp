// Shard file names and --split-max-size parsing, as llama-gguf-split spells them.
#include <cctype>
#include <cstdio>
#include <limits>

#include "format/gguf_shards.hpp"
#include "rebox/error.hpp"

namespace rebox {

std::string shard_path(const std::string& prefix, uint32_t index, uint32_t count) {
    char suffix[64];
    std::snprintf(suffix, sizeof suffix, "-%05u-of-%05u.gguf", index + 1, count);
    return prefix + suffix;
}

std::vector<std::filesystem::path> output_paths(const std::filesystem::path& output, size_t shards,
                                                bool split) {
    if (!split) return {output};
    std::string prefix = output.string();
    if (prefix.size() > 5 && prefix.compare(prefix.size() - 5, 5, ".gguf") == 0)
        prefix.resize(prefix.size() - 5);
    std::vector<std::filesystem::path> paths;
    for (size_t i = 0; i < shards; ++i)
        paths.emplace_back(
            shard_path(prefix, static_cast<uint32_t>(i), static_cast<uint32_t>(shards)));
    return paths;
}

std::optional<std::string> shard_prefix(const std::string& path, uint32_t index, uint32_t count) {
    const std::string probe = shard_path("", index, count);
    if (path.size() <= probe.size() ||
        path.compare(path.size() - probe.size(), probe.size(), probe) != 0)
        return std::nullopt;
    return path.substr(0, path.size() - probe.size());
}

uint64_t parse_split_size(const std::string& text) {
    uint64_t value = 0;
    size_t i = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
        if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10)
            throw_input_error("", "--split-max-size", "'" + text + "' is too large");
        value = value * 10 + digit;
    }
    uint64_t unit = 1;
    if (i + 1 == text.size() && (text[i] == 'M' || text[i] == 'm')) {
        unit = 1000ull * 1000;
    } else if (i + 1 == text.size() && (text[i] == 'G' || text[i] == 'g')) {
        unit = 1000ull * 1000 * 1000;
    } else if (i != text.size()) {
        i = 0;  // junk after the digits
    }
    if (i == 0 || value == 0)
        throw_input_error("", "--split-max-size", "'" + text + "' is not a size",
                          "N, NM or NG with N > 0");
    if (value > std::numeric_limits<uint64_t>::max() / unit)
        throw_input_error("", "--split-max-size", "'" + text + "' is too large");
    return value * unit;
}

std::filesystem::path mmproj_path_beside(const std::filesystem::path& output) {
    return output.parent_path() / ("mmproj-" + output.filename().string());
}

}  // namespace rebox
