// verify's own reading of a sentence-transformers model's Dense modules (gemma-embedding): which
// folders modules.json lists, each one's in/out features from its config.json, and its
// linear.weight from its model.safetensors, added to the source index as
// "<folder>.linear.weight" (the name the registry pairs with dense_2 / dense_3). Apart from
// src/model/st_dense (the writer's reading).
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "format/safetensors.hpp"
#include "verify/sources/ref_config.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

// Fills config.dense_2 / dense_3 from model_dir's modules.json for a gemma-embedding config
// (nothing for other model types). Throws rebox::Error (input) naming the file for a malformed
// modules.json or module config.json, or a Dense folder llama.cpp has no place for.
void read_ref_dense(const std::filesystem::path& model_dir, RefConfig& config);

// Opens each Dense module's model.safetensors and adds its tensors to `index` as
// "<folder>.<name>" (a tensor other than linear.weight is then a source tensor the GGUF lacks).
// mlx-embeddings' layout: the model's own file holds the projections as dense.0 (2_Dense) and
// dense.1 (3_Dense), the module folders absent; those index entries are renamed to
// "2_Dense.linear.weight" / "3_Dense.linear.weight", their features taken from their [out, in]
// shapes, and a folder beside them is not read (the model computes with the in-file copy).
// The returned files must outlive the index (its spans point into them).
std::vector<std::shared_ptr<const SafetensorsFile>> index_ref_dense(
    const std::filesystem::path& model_dir, RefConfig& config, SourceIndex& index);

}  // namespace rebox::verify_ref
