// EmbeddingGemma's sentence-transformers Dense modules (modules.json entries whose type ends with
// "Dense", each a folder with model.safetensors and config.json), as llama.cpp's converter
// (EmbeddingGemma.__init__ / generate_extra_tensors) reads them: "2_Dense" becomes dense_2,
// "3_Dense" dense_3. Only what llama.cpp's graph computes is accepted: a Linear without bias and
// with the identity activation (build_dense_out multiplies and nothing else).
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
};

// The Dense modules in modules.json order; empty when there is no modules.json or no Dense module.
// Throws rebox::Error (input class), one line naming the file and field, for a module rebox cannot
// write as llama.cpp computes it: a folder other than 2_Dense / 3_Dense (or twice), no
// model.safetensors, in/out features missing, a bias, an activation other than Identity.
std::vector<DenseModule> read_dense_modules(const std::filesystem::path& model_dir);

}  // namespace rebox
