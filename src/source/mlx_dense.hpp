// mlx-embeddings' EmbeddingGemma layout: its Model holds the sentence-transformers Dense modules as
// a list `dense` of two bias-free Linears, so `mlx_embeddings.convert` saves them in the model's
// own safetensors as dense.0 (2_Dense: hidden -> 4*hidden) and dense.1 (3_Dense: back to hidden),
// quantized like every other Linear (weight / scales / biases), and copies modules.json but not the
// 2_Dense / 3_Dense folders (docs/formats.md, "Encoders (mlx-embeddings)"). The reader renames them
// to the names the registry pairs with dense_2 / dense_3; the codes are carried as they are.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/st_dense.hpp"
#include "source/source_model.hpp"

namespace rebox {

class ModelDir;

namespace mlx_dense {

// {the name in the model's file, true for dense.1 (dense_3)} of a tensor read from there; nullopt
// for every other tensor (a Dense folder's linear.weight included).
using InFile = std::pair<std::string, bool>;
std::optional<InFile> in_file_origin(const SourceTensor& tensor);

// Adds EmbeddingGemma's Dense projections to `model`: each module modules.json lists, from its
// folder or from the model's file. Throws rebox::Error (input class), one line naming the file and
// tensor, for: one of dense.0 / dense.1 without the other, any other "dense." tensor in the model's
// file (a bias, a third projection), a folder projection that differs from the in-file one (both
// present), and a listed module found in neither place. Folder weights with a dtype that has no
// exact GGUF float type become Blockers, as before.
void add_dense_projections(const ModelDir& model_dir, const std::vector<DenseModule>& modules,
                           SourceModel& model);

}  // namespace mlx_dense
}  // namespace rebox
