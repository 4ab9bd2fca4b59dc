// ModelDir: config.json and the safetensors files of a checkpoint folder, read once.
#include "source/model_dir.hpp"

#include <nlohmann/json.hpp>

#include "../model/json_file.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

// Mistral's own release format (params.json, consolidated.safetensors, tekken.json), which
// llama.cpp's converter reads only with --mistral-format, under other tensor names and keys.
[[noreturn]] void refuse_mistral_format(const std::filesystem::path& path) {
    throw Error(path.string(),
                {Blocker{"params.json",
                         "a Mistral-format checkpoint (params.json, consolidated.safetensors, no "
                         "config.json): rebox reads the Hugging Face format only",
                         "use the Hugging Face-format files of the same release: config.json, "
                         "model.safetensors (or its shards with model.safetensors.index.json) and "
                         "tokenizer.json with tokenizer_config.json"}});
}

}  // namespace

ModelDir::ModelDir() = default;
ModelDir::~ModelDir() = default;

std::shared_ptr<const ModelDir> ModelDir::open(const std::filesystem::path& path) {
    std::shared_ptr<ModelDir> dir(new ModelDir());
    dir->path_ = path;
    const std::filesystem::path config = path / "config.json";
    if (std::filesystem::exists(config))
        dir->config_ = std::make_unique<const nlohmann::json>(detail::read_json_object(config));
    else if (std::filesystem::exists(path / "params.json"))
        refuse_mistral_format(path);
    dir->safetensors_ = SafetensorsModel::open(path);
    return dir;
}

const nlohmann::json& ModelDir::config() const {
    if (config_ == nullptr) detail::read_json_object(path_ / "config.json");  // throws: not found
    if (config_ == nullptr)  // the file appeared since open(): still report it as read then
        throw_input_error((path_ / "config.json").string(), "", "missing when the model was read");
    return *config_;
}

}  // namespace rebox
