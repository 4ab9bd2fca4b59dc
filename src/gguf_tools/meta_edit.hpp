// `rebox meta`: edit a GGUF's metadata (set, add, delete keys; chat template; tensor names) and
// write the result with the tensor data copied file to file (copy_file_range), either to a new file
// or over the input atomically (temporary file, fsync, rename). The file's alignment is kept; the
// data section moves when the metadata grows or shrinks.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rebox {

struct MetaEdits {
    // "KEY=VALUE" (existing key, its type kept), "KEY:TYPE=VALUE" (new key, or the existing type
    // repeated), "KEY:ARRAY[TYPE]=@file.json" (new array key).
    std::vector<std::string> sets;
    std::vector<std::string> deletes;                         // applied before the sets
    std::optional<std::filesystem::path> chat_template_file;  // tokenizer.chat_template
    std::vector<std::string> renames;                         // "OLD=NEW" tensor names
    bool empty() const {
        return sets.empty() && deletes.empty() && !chat_template_file && renames.empty();
    }
};

struct MetaEditResult {
    std::vector<std::filesystem::path> written;  // files replaced or created
    std::vector<std::string> changes;            // one human line per change
};

// Applies `edits` to `input` (a GGUF, or the first shard of a split set: KV edits rewrite the
// first shard, a tensor rename the shard holding the tensor). With `output`, writes there (refused
// for split sets, when it is the input, or when it exists and !overwrite); otherwise replaces the
// input in place. Every check runs before anything is written; throws rebox::Error.
MetaEditResult edit_gguf_metadata(const std::filesystem::path& input,
                                  const std::optional<std::filesystem::path>& output,
                                  const MetaEdits& edits, bool force);

}  // namespace rebox
