// The name heuristics of llama.cpp's converter (gguf-py Metadata.get_model_id_components and
// Metadata.id_to_title): a Hugging Face id or directory name such as "Qwen/Qwen3-0.6B-Instruct-v2"
// split into organization, basename, size label, finetune and version, and Python's str.title()
// casing of names. Letters are cased as ASCII; other bytes count as uncased (docs/gguf.md §4.5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rebox {

struct ModelIdParts {
    std::optional<std::string> full_name;     // the part after "org/" (or the whole id)
    std::optional<std::string> organization;  // before the first '/', unless it starts with '.'
    std::optional<std::string> basename;
    std::optional<std::string> finetune;
    std::optional<std::string> version;
    std::optional<std::string> size_label;
};

// total_params: the parameter count of the tensors written (0: unknown), used to tell a size in
// the name that is far from the real count (then a finetune such as "32k").
ModelIdParts model_id_parts(const std::optional<std::string>& model_id, int64_t total_params);

// Words split at '-' and whitespace, joined by one space; an all-lowercase word that is not a
// version ("v2", "v1.5") and does not start with a digit gets Python str.title() casing.
std::string id_to_title(const std::string& id);

// Python str.title() over ASCII letters: a letter after a letter is lowered, any other raised.
std::string python_title(const std::string& text);

}  // namespace rebox
