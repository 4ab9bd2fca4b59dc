// Input adapter for mcq-v1 packed checkpoints (docs/mcq-v1.md): reads the safetensors files,
// each file's __metadata__["mcq"], and turns every <name>.qcodes/.scales/.mins triple into a
// QuantView. Every rule of the spec's "What a reader must refuse" becomes a Blocker naming the
// tensor; malformed safetensors files throw rebox::Error (input class).
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "format/safetensors.hpp"
#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox {

SourceModel read_mcq_model(const ModelDir& model_dir);

// The same for safetensors files already opened, or parsed from memory (SafetensorsFile::parse, as
// the fuzzers do); model_dir is where config.json and the tokenizer are read from later.
SourceModel read_mcq_files(const std::filesystem::path& model_dir,
                           const std::vector<std::shared_ptr<SafetensorsFile>>& files);

// Checks that bits beyond the last code in a packed stream are zero (spec: "Bits after the last
// code, up to the byte boundary, are zero").
bool mcq_padding_is_zero(std::span<const uint8_t> codes, uint64_t n_codes, int bits);

}  // namespace rebox
