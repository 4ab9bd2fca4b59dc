// rebox check: will this GGUF load, without running a loader? The format reader's rules (a file
// it cannot read is unreadable), then llama.cpp's loader rules (key types, required keys, the
// tensor set and shapes of registry architectures, tokenizer consistency, split sets) and, for
// --for ollama, Ollama's reader rules. Each finding names the key, tensor or file (docs/check.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace rebox {

enum class CheckTarget { llama_cpp, ollama };

enum class CheckSeverity {
    finding,  // the target refuses the file (or, for Ollama, silently misreads it)
    warning,  // the target loads it but warns, falls back to a default, or behaves differently
};

struct CheckFinding {
    CheckSeverity severity = CheckSeverity::finding;
    std::string file;     // the shard the finding is about
    std::string subject;  // key, tensor or "file name"
    std::string message;  // what is wrong and what would fix it
};

struct CheckReport {
    std::vector<std::filesystem::path> files;  // the shards checked, in order
    size_t tensor_count = 0;
    std::vector<CheckFinding> findings;  // in check order
    size_t count(CheckSeverity severity) const;
};

// Throws rebox::Error (input class) when a file is unreadable: it breaks a rule of the format
// reader (truncated, misaligned, bad magic, ...). Everything else is reported.
// With mmproj (a projector file, general.architecture clip): that file is checked too, and the
// pair as mtmd checks it (the text model's input width equals the projector's output width).
CheckReport check_gguf(const std::filesystem::path& file, CheckTarget target,
                       const std::filesystem::path& mmproj = {});

}  // namespace rebox
