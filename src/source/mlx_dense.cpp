// EmbeddingGemma's Dense projections from their sentence-transformers folders or from
// mlx-embeddings' dense.0 / dense.1 in the model's file (see mlx_dense.hpp).
#include "source/mlx_dense.hpp"

#include <array>
#include <cstring>

#include "format/safetensors.hpp"
#include "format/shape_text.hpp"
#include "rebox/error.hpp"
#include "source/model_dir.hpp"
#include "source/source_values.hpp"
#include "source_helpers.hpp"

namespace rebox::mlx_dense {
namespace {

constexpr std::array<const char*, 2> kInFile = {"dense.0.weight", "dense.1.weight"};
constexpr std::array<const char*, 2> kFolder = {"2_Dense", "3_Dense"};

std::string registry_name(bool second) { return std::string(kFolder[second]) + ".linear.weight"; }

// The folder's linear.weight as a float tensor named for the registry; nullopt (with a Blocker)
// for a dtype without an exact GGUF float type.
std::optional<SourceTensor> folder_tensor(const std::shared_ptr<const SafetensorsFile>& file,
                                          const DenseModule& module, SourceModel& model) {
    std::optional<SourceTensor> weight;
    for (const StTensorInfo& info : file->tensors()) {
        if (info.name != "linear.weight")
            throw_input_error(file->display_name(), info.name,
                              "not written: llama.cpp's " + module.gguf_stem +
                                  " is the Linear's weight alone (no bias)",
                              "a Dense module holding only linear.weight");
        const std::optional<FloatDtype> dtype = source_detail::float_dtype(info.dtype);
        if (!dtype) {
            model.blockers.push_back(
                Blocker{module.path + ".linear.weight",
                        file->display_name() + ": dtype " + std::string(st_dtype_name(info.dtype)) +
                            " has no exact GGUF float type (expected F32, F16 or BF16)",
                        "store the Dense weight as F32, F16 or BF16"});
            continue;
        }
        weight = source_detail::float_tensor(*file, info, *dtype);
        weight->name = module.path + ".linear.weight";
    }
    return weight;
}

// Both copies present: the folder's must hold the very values of the in-file one (as binary32),
// else which one the model computes with is ambiguous.
void require_same(const SourceTensor& in_file, const SourceTensor& folder,
                  const std::string& folder_file) {
    const std::string& name = in_file.renamed_from;
    const std::string fix = "keep one copy: remove the " + folder.name.substr(0, 7) +
                            " folder (mlx-embeddings computes with " + name + ") or remove " +
                            name.substr(0, 7) + ".* from the model's file";
    if (in_file.shape != folder.shape)
        throw_input_error(folder_file, "linear.weight",
                          "shape " + detail::shape_text(folder.shape) + " differs from " + name +
                              " " + detail::shape_text(in_file.shape) +
                              " in the model's file (both copies present)",
                          fix);
    const uint64_t count = in_file.element_count();
    std::vector<float> a(4096), b(4096);
    for (uint64_t first = 0; first < count; first += a.size()) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(a.size(), count - first));
        source_values_f32(in_file, first, n, a.data());
        source_values_f32(folder, first, n, b.data());
        for (size_t i = 0; i < n; ++i)
            if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0)
                throw_input_error(folder_file, "linear.weight",
                                  "value " + std::to_string(first + i) + " is " +
                                      std::to_string(b[i]) + ", " + name +
                                      " in the model's file holds " + std::to_string(a[i]) +
                                      " (both copies present, and they differ)",
                                  fix);
    }
}

}  // namespace

std::optional<InFile> in_file_origin(const SourceTensor& tensor) {
    for (const bool second : {false, true})
        if (tensor.renamed_from == kInFile[second]) return InFile{tensor.renamed_from, second};
    return std::nullopt;
}

void add_dense_projections(const ModelDir& model_dir, const std::vector<DenseModule>& modules,
                           SourceModel& model) {
    // The model file's "dense." tensors: the pair mlx-embeddings writes, nothing else.
    std::array<bool, 2> stored{};
    for (const auto& file : model_dir.safetensors().files())
        for (const StTensorInfo& info : file->tensors()) {
            if (!info.name.starts_with("dense.")) continue;
            bool known = false;
            for (const bool second : {false, true}) {
                const std::string module = std::string(kInFile[second]).substr(0, 7);
                if (info.name == kInFile[second]) stored[second] = known = true;
                known |= info.name == module + ".scales" || info.name == module + ".biases";
            }
            if (!known)
                throw_input_error(file->display_name(), info.name,
                                  "not written: mlx-embeddings' EmbeddingGemma has two bias-free "
                                  "projections, dense.0 and dense.1 (llama.cpp's dense_2 / "
                                  "dense_3), and nothing else",
                                  "the model's file as mlx_embeddings.convert writes it");
        }
    if (stored[0] != stored[1])
        throw_input_error(
            model_dir.path().string(), kInFile[stored[0]],
            std::string("is missing: the model's file has ") + kInFile[!stored[0]] + " alone",
            "both projections, dense.0 (2_Dense) and dense.1 (3_Dense), as "
            "mlx-embeddings stores them");
    // Rename the pair read from the model's file (a tensor the reader refused has a Blocker).
    std::array<std::optional<size_t>, 2> in_file;
    for (size_t i = 0; i < model.tensors.size(); ++i)
        for (const bool second : {false, true})
            if (stored[second] && model.tensors[i].name == kInFile[second]) {
                model.tensors[i].renamed_from = model.tensors[i].name;
                model.tensors[i].name = registry_name(second);
                in_file[second] = i;
            }
    for (const DenseModule& module : modules) {
        const bool second = module.gguf_stem == "dense_3";
        if (!module.has_folder) {
            if (!stored[second])
                throw_input_error((model_dir.path() / module.path / "model.safetensors").string(),
                                  "",
                                  "missing (modules.json lists the Dense module), and the "
                                  "model's file has no " +
                                      std::string(kInFile[second]),
                                  "the module's folder as its sentence-transformers release has "
                                  "it, or mlx-embeddings' in-file projection");
            continue;
        }
        auto file = SafetensorsFile::open(model_dir.path() / module.path / "model.safetensors");
        std::optional<SourceTensor> weight = folder_tensor(file, module, model);
        model.files.push_back(file);
        if (!weight) continue;
        if (stored[second]) {
            if (in_file[second])
                require_same(model.tensors[*in_file[second]], *weight, file->display_name());
            continue;  // the model's own (in-file) projection is written
        }
        model.tensors.push_back(std::move(*weight));
    }
}

}  // namespace rebox::mlx_dense
