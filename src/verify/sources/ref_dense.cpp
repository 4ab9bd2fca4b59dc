// verify's reading of modules.json's Dense modules (see ref_dense.hpp), written from
// EmbeddingGemma.__init__ / generate_extra_tensors in llama.cpp's converter: the modules whose
// type ends with "Dense" and whose folder holds model.safetensors, "2_Dense" as dense_2 and any
// other folder as dense_3, in_features / out_features from the folder's config.json.
// mlx-embeddings' layout (no folders; the model's own file holds dense.0 / dense.1) is taken from
// verify's index of the model's file, written from mlx_embeddings' gemma3_text Model (its `dense`
// list applied in order after the mean pooling).
#include "verify/sources/ref_dense.hpp"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "model/json_file.hpp"
#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"

namespace rebox::verify_ref {
namespace {

using nlohmann::json;

// The Dense folders modules.json lists that hold weights, in its order.
std::vector<std::string> dense_folders(const std::filesystem::path& model_dir) {
    const std::filesystem::path file = model_dir / "modules.json";
    std::vector<std::string> folders;
    if (!std::filesystem::is_regular_file(file)) return folders;
    const json modules = json::parse(rebox::detail::read_side_file(file), nullptr, false);
    if (!modules.is_array()) throw_input_error(file.string(), "", "not a JSON array of modules");
    for (const json& module : modules) {
        if (!module.is_object()) throw_input_error(file.string(), "", "a module is no object");
        const auto type = module.find("type");
        const auto path = module.find("path");
        if (type == module.end() || !type->is_string() ||
            !type->get<std::string>().ends_with("Dense"))
            continue;
        if (path == module.end() || !path->is_string())
            throw_input_error(file.string(), "path", "a Dense module without a path string");
        const std::string folder = path->get<std::string>();
        if (folder.empty() || folder.find('/') != std::string::npos ||
            folder.find('\\') != std::string::npos || folder == "." || folder == "..")
            throw_input_error(file.string(), "path",
                              "'" + folder + "' is not a folder of the model directory");
        if (std::filesystem::is_regular_file(model_dir / folder / "model.safetensors"))
            folders.push_back(folder);
    }
    return folders;
}

uint32_t features(const json& config, const std::string& file, const char* key) {
    const auto it = config.find(key);
    if (it == config.end() || !it->is_number_unsigned() || it->get<uint64_t>() == 0 ||
        it->get<uint64_t>() > kMaxWidth)
        throw_input_error(file, key, "missing or not a count up to verify's cap",
                          "at most " + std::to_string(kMaxWidth));
    return static_cast<uint32_t>(it->get<uint64_t>());
}

// The architecture's record says whether Dense modules belong to the model (gemma-embedding).
bool has_dense_modules(const RefConfig& config) {
    const RefArch* arch = find_ref_arch(config.model_type);
    return arch != nullptr && arch->dense_modules;
}

}  // namespace

void read_ref_dense(const std::filesystem::path& model_dir, RefConfig& config) {
    if (!has_dense_modules(config)) return;
    for (const std::string& folder : dense_folders(model_dir)) {
        const std::filesystem::path path = model_dir / folder / "config.json";
        const json module = json::parse(rebox::detail::read_side_file(path), nullptr, false);
        if (!module.is_object()) throw_input_error(path.string(), "", "not a JSON object");
        const RefConfig::Dense dense{features(module, path.string(), "in_features"),
                                     features(module, path.string(), "out_features")};
        (folder == "2_Dense" ? config.dense_2 : config.dense_3) = dense;
    }
}

std::vector<std::shared_ptr<const SafetensorsFile>> index_ref_dense(
    const std::filesystem::path& model_dir, RefConfig& config, SourceIndex& index) {
    std::vector<std::shared_ptr<const SafetensorsFile>> files;
    if (!has_dense_modules(config)) return files;
    // mlx-embeddings' Model.dense list, saved in the model's file: dense.0 is 2_Dense, dense.1 is
    // 3_Dense (the order sentence-transformers applies them in).
    std::vector<std::string> in_file;
    for (const char* folder : {"2_Dense", "3_Dense"}) {
        const std::string stored = folder[0] == '2' ? "dense.0.weight" : "dense.1.weight";
        const auto it = index.by_stripped_name.find(stored);
        if (it == index.by_stripped_name.end()) continue;
        SourceTensor& entry = index.entries[it->second];
        const size_t i = it->second;
        index.by_stripped_name.erase(it);
        entry.name = std::string(folder) + ".linear.weight";
        add_by_stripped_name(index, i);
        if (entry.shape.size() != 2 || entry.shape[0] < 1 || entry.shape[1] < 1 ||
            entry.shape[0] > kMaxWidth || entry.shape[1] > kMaxWidth)
            throw_input_error(
                entry.file, stored, "shape " + shape_text(entry.shape),
                "a 2-D [out, in] projection of at most " + std::to_string(kMaxWidth) + " per side");
        (folder[0] == '2' ? config.dense_2 : config.dense_3) = RefConfig::Dense{
            static_cast<uint32_t>(entry.shape[1]), static_cast<uint32_t>(entry.shape[0])};
        in_file.push_back(folder);
    }
    for (const std::string& folder : dense_folders(model_dir)) {
        if (std::find(in_file.begin(), in_file.end(), folder) != in_file.end()) continue;
        std::shared_ptr<const SafetensorsFile> file =
            SafetensorsFile::open(model_dir / folder / "model.safetensors");
        for (const StTensorInfo& info : file->tensors()) {
            SourceTensor entry;
            entry.name = folder + "." + info.name;
            entry.file = file->display_name();
            entry.shape = info.shape;
            entry.element_count = info.element_count();
            bind_plain(*file, info, entry);
            index.entries.push_back(std::move(entry));
            add_by_stripped_name(index, index.entries.size() - 1);
        }
        files.push_back(std::move(file));
    }
    return files;
}

}  // namespace rebox::verify_ref
