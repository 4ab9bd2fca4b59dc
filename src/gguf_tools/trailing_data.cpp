// find_trailing_data(): the layout's end (data offset + last tensor end padded to the alignment)
// against the file size, and a search for a second "GGUF" magic in the bytes after it.
#include "gguf_tools/trailing_data.hpp"

#include <algorithm>
#include <cstring>

#include "format/gguf_layout.hpp"

namespace rebox {
namespace {

constexpr uint64_t kMagicSearchBytes = 1 << 20;  // llama-gguf-split shards start right at the end

}  // namespace

std::optional<TrailingData> find_trailing_data(const GgufFile& file) {
    uint64_t end = file.tensors().empty() ? file.meta_end() : file.data_offset();
    for (const GgufTensorInfo& t : file.tensors())
        end = std::max(end, file.data_offset() + gguf_pad(t.offset + t.nbytes, file.alignment()));
    const uint64_t size = file.file_size();
    if (size <= end) return std::nullopt;
    TrailingData trailing;
    trailing.layout_end = end;
    trailing.extra_bytes = size - end;
    const auto bytes = file.bytes();
    // The unpadded end too: a writer may not pad the last tensor.
    uint64_t from = file.data_offset();
    for (const GgufTensorInfo& t : file.tensors())
        from = std::max(from, file.data_offset() + t.offset + t.nbytes);
    if (file.tensors().empty()) from = file.meta_end();
    const uint64_t to = std::min<uint64_t>(size, end + kMagicSearchBytes);
    for (uint64_t at = from; at + 4 <= to; ++at) {
        if (std::memcmp(bytes.data() + at, "GGUF", 4) == 0) {
            trailing.next_header = at;
            break;
        }
    }
    const std::string name = file.display_name();
    if (trailing.next_header) {
        trailing.explanation =
            name + ": several GGUF files joined end to end: a second GGUF header starts at byte " +
            std::to_string(*trailing.next_header) + ", where this file's tensor data ends (" +
            std::to_string(trailing.extra_bytes) +
            " bytes follow); shards joined with `cat` do not load in llama.cpp: keep the shard "
            "files apart and run `rebox merge FIRST-SHARD OUT.gguf` to get one file";
    } else {
        trailing.explanation = name + ": " + std::to_string(trailing.extra_bytes) +
                               " bytes after the end of the tensor data (byte " +
                               std::to_string(end) +
                               ") belong to no tensor; readers ignore them (truncate the file to " +
                               std::to_string(end) + " bytes to drop them)";
    }
    return trailing;
}

}  // namespace rebox
