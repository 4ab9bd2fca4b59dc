// The general.* KVs llama.cpp's converter writes about a model (gguf-py Metadata.load, then the
// converter's prepare_metadata and Metadata.set_gguf_meta_model): from README.md's front matter,
// config.json's _name_or_path, the directory name, generation_config.json (general.sampling.*),
// a --metadata override file and --name, with the converter's heuristics (docs/gguf.md §4.5).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/size_label.hpp"
#include "rebox/gguf_value.hpp"

namespace rebox {

struct CardMetadataSources {
    std::filesystem::path model_dir;
    std::optional<std::filesystem::path> overrides_file;  // --metadata FILE.json
    std::string name;                                     // --name; empty: not given
    std::vector<CountedTensor> tensors;                   // the tensors written
};

// gguf-py Metadata's fields by their Python names ("name", "source_url", "base_models",
// "sampling_top_k", ...); a missing or null field is None. origin[field] = {"file": where the value
// came from, "key": its key there}, for messages.
struct CardMetadata {
    nlohmann::json fields = nlohmann::json::object();
    nlohmann::json origin = nlohmann::json::object();
};

// Metadata.load(overrides, model_dir, name, total_params) plus prepare_metadata's fallbacks (the
// raw directory name when no name is left, the computed size label when none is given). Throws
// rebox::Error (input) for a model card that is not YAML or an override file that is not a JSON
// object.
CardMetadata load_card_metadata(const CardMetadataSources& sources);

// set_gguf_meta_model: general.type first, then general.sampling.*, name, author, ... languages,
// typed as gguf-py writes them (strings, INT32 / FLOAT32 sampling values, UINT32 counts,
// ARRAY[STRING] tags and languages); empty strings and lists are not written. Throws rebox::Error
// (input) naming the field and where it came from for a value the converter could not write (a
// number where text belongs, a list of mixed types).
std::vector<GgufKV> card_metadata_kvs(const CardMetadata& metadata);

// The directory's name as the converter takes it (pathlib's Path.name of the path given; "." and
// ".." are resolved against the working directory first).
std::string model_dir_name(const std::filesystem::path& dir);

}  // namespace rebox
