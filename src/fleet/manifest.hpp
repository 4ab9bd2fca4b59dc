// The batch manifest: a TSV of models to convert, one a line (source dir, output name, convert
// options), read as hostile input. Every malformed line is one rebox::Error naming the manifest,
// the line and what would fix it; indexes count the model lines after the optional '#' header.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace rebox::fleet {

struct ManifestEntry {
    size_t line_number = 0;            // 1-based line of the manifest file (for messages)
    std::filesystem::path source_dir;  // absolute, or joined to the manifest's folder
    std::string name;                  // output name: DIR/NAME.gguf and DIR/NAME.json
    std::vector<std::string> options;  // convert options, split at spaces (may be empty)
};

struct Manifest {
    std::filesystem::path path;
    std::vector<ManifestEntry> entries;  // entries[i] is index i
};

// Largest manifest read (a model zoo of a million lines fits; a hostile multi-GB file does not).
inline constexpr size_t kMaxManifestBytes = 16u << 20;
// Longest output name: it becomes two file names (NAME.gguf, NAME.json) and shard names.
inline constexpr size_t kMaxNameBytes = 200;

// Parses manifest text; `path` only names the file in messages and anchors relative source dirs.
Manifest parse_manifest(const std::string& text, const std::filesystem::path& path);
// Reads and parses the file (a regular file of at most kMaxManifestBytes).
Manifest read_manifest(const std::filesystem::path& path);

}  // namespace rebox::fleet
