// A model card's YAML front matter (README.md) as gguf-py's Metadata.load_model_card reads it: the
// lines between a first line "---" and the next "---", with its two text fixes ("- no" list items
// quoted, tabs as two spaces), parsed as YAML 1.1 the way PyYAML's safe_load types plain scalars
// (yes/no/on/off booleans, ints, floats with a '.', null and ~). The document as JSON.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace rebox {

// The front matter's text (without the "---" lines, each line ending in '\n'), or "" when the card
// has none (no README.md, empty, or a first line other than "---").
std::string model_card_front_matter(const std::string& readme_text);

// The parsed front matter when it is a mapping, else an empty object. `file` names the card in
// the error thrown (rebox::Error, input) for YAML that does not parse.
nlohmann::json parse_model_card(const std::string& readme_text, const std::string& file);

// dir/README.md read and parsed; an empty object when there is none.
nlohmann::json read_model_card(const std::filesystem::path& dir);

}  // namespace rebox
