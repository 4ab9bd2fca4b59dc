// ModelDir: config.json and the safetensors files of a checkpoint folder, read once.
#include "source/model_dir.hpp"

#include <nlohmann/json.hpp>

#include "../model/json_file.hpp"
#include "rebox/error.hpp"

namespace rebox {

ModelDir::ModelDir() = default;
ModelDir::~ModelDir() = default;

std::shared_ptr<const ModelDir> ModelDir::open(const std::filesystem::path& path) {
    std::shared_ptr<ModelDir> dir(new ModelDir());
    dir->path_ = path;
    const std::filesystem::path config = path / "config.json";
    if (std::filesystem::exists(config))
        dir->config_ = std::make_unique<const nlohmann::json>(detail::read_json_object(config));
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
