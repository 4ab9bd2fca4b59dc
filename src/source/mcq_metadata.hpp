// Parsing of one safetensors file's __metadata__["mcq"] JSON (spec mcq-v1 "The metadata") into
// entries whose fields are checked for presence and type only; the reader applies the value rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "source/source_model.hpp"

namespace rebox::mcq {

inline constexpr const char* kMetadataKey = "mcq";
inline constexpr int64_t kVersion = 1;

struct Entry {
    int bits = 0;  // 1..8 once the reader accepts the entry
    int64_t group = 0;
    std::string layout;
    std::vector<int64_t> shape;
    std::string problem;  // non-empty: a field is missing or ill-typed (the entry is refused)
};

struct FileMetadata {
    bool present = false;                  // the file has __metadata__["mcq"]
    std::optional<Blocker> file_blocker;   // version/structure problem: no entry is usable
    std::map<std::string, Entry> entries;  // tensor name -> entry
};

// Throws rebox::Error (input class) when the value is not valid JSON; everything else that makes
// the metadata unusable is a Blocker.
FileMetadata parse_file_metadata(const std::string& file_name,
                                 const std::map<std::string, std::string>& st_metadata);

}  // namespace rebox::mcq
