// convert --modelfile: the Ollama Modelfile for a written GGUF (docs/check.md §3): one FROM line
// per output file (every shard), PARAMETER stop for the end-of-turn / end-of-sequence tokens, the
// sampling defaults of generation_config.json (Ollama does not read them from the GGUF), no
// TEMPLATE (Ollama >= 0.30.0 renders the embedded chat template).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace rebox {

// The Modelfile text for `outputs` (the written files, in order; FROM names them relative to
// their folder) and the projector file `mmproj` beside them (a second FROM, which Ollama >= 0.30.4
// takes as a projector layer; empty: none), reading the stop tokens from the first file and the
// sampling defaults from `generation_config` when that file exists.
std::string ollama_modelfile(const std::vector<std::filesystem::path>& outputs,
                             const std::filesystem::path& generation_config,
                             const std::filesystem::path& mmproj = {});

// OUT.gguf -> OUT.Modelfile (a split set's shards share the name given to convert).
std::filesystem::path modelfile_path(const std::filesystem::path& output);

// Writes the text through AtomicOutput (whole or not at all); refuses an existing file unless
// `force`.
void write_modelfile(const std::filesystem::path& path, const std::string& text, bool force);

}  // namespace rebox
