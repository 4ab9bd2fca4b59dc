// Recognises GGUF files with bytes after their last tensor: most often split shards joined with
// `cat`, which llama.cpp cannot load (it opens shards by name, and reads only the first header).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "format/gguf_file.hpp"

namespace rebox {

struct TrailingData {
    uint64_t layout_end = 0;   // where this file's data section ends (last tensor, padded)
    uint64_t extra_bytes = 0;  // file_size - layout_end
    std::optional<uint64_t> next_header;  // offset of a "GGUF" magic after layout_end, if any
    std::string explanation;              // one line for the user
};

// nullopt when the file ends where its layout does.
std::optional<TrailingData> find_trailing_data(const GgufFile& file);

}  // namespace rebox
