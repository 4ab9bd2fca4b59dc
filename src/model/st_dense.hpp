// EmbeddingGemma's sentence-transformers Dense modules (modules.json entries whose type ends with
// "Dense", each a folder with model.safetensors and config.json), as llama.cpp's converter
// (EmbeddingGemma.__init__ / generate_extra_tensors) reads them: "2_Dense" becomes dense_2,
// "3_Dense" dense_3. Only what llama.cpp's graph computes is accepted: a Linear without bias and
// with the identity activation (build_dense_out multiplies and nothing else). mlx-embeddings'
// checkpoints keep modules.json but not the folders: their projections are in the model's file
// (source/mlx_dense.hpp), so a listed folder that does not exist is reported, not refused, here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace rebox {

struct DenseModule {
    std::string path;       // "2_Dense" (relative to the model folder)
    std::string gguf_stem;  // "dense_2"
    uint32_t in_features = 0;
    uint32_t out_features = 0;
    // False when modules.json lists the module but its folder does not exist (features 0): the
    // projection must then come from the model's file (mlx-embeddings' dense.0 / dense.1).
    bool has_folder = true;
};

// The Dense modules in modules.json order; empty when there is no modules.json or no Dense module.
// Throws rebox::Error (input class), one line naming the file and field, for a module rebox cannot
// write as llama.cpp computes it: a folder other than 2_Dense / 3_Dense (or twice), a folder
// without model.safetensors, in/out features missing, a bias, an activation other than Identity.
std::vector<DenseModule> read_dense_modules(const std::filesystem::path& model_dir);

}  // namespace rebox
