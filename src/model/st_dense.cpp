// modules.json's Dense modules -> DenseModule list (see st_dense.hpp), each checked against what
// llama.cpp's converter and gemma-embedding graph do with it.
#include "model/st_dense.hpp"

#include <limits>
#include <nlohmann/json.hpp>

#include "json_file.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

using nlohmann::json;

uint32_t feature_count(const json& config, const std::string& file, const char* field) {
    const auto it = config.find(field);
    if (it == config.end() || !it->is_number_unsigned() || it->get<uint64_t>() == 0 ||
        it->get<uint64_t>() > std::numeric_limits<uint32_t>::max())
        throw_input_error(file, field, "missing or not a positive count",
                          "the Linear's size, as sentence-transformers writes it");
    return static_cast<uint32_t>(it->get<uint64_t>());
}

DenseModule read_module(const std::filesystem::path& model_dir, const std::string& path) {
    DenseModule module;
    module.path = path;
    module.gguf_stem = path == "2_Dense" ? "dense_2" : "dense_3";
    if (!std::filesystem::exists(model_dir / path)) {
        module.has_folder = false;
        return module;
    }
    const std::filesystem::path weights = model_dir / path / "model.safetensors";
    if (!std::filesystem::is_regular_file(weights))
        throw_input_error(weights.string(), "", "missing (modules.json lists the Dense module)",
                          "the module's weights as its sentence-transformers release has them");
    const std::filesystem::path config_file = model_dir / path / "config.json";
    const std::string file = config_file.string();
    const json config = detail::read_json_object(config_file);
    module.in_features = feature_count(config, file, "in_features");
    module.out_features = feature_count(config, file, "out_features");
    if (const auto bias = config.find("bias"); bias != config.end() && *bias != false)
        throw_input_error(file, "bias",
                          "is " + bias->dump() +
                              ": llama.cpp's converter drops a Dense bias and its graph adds none",
                          "false (a Dense module without bias, as EmbeddingGemma's)");
    const auto activation = config.find("activation_function");
    const bool identity = activation != config.end() && activation->is_string() &&
                          (activation->get<std::string>() == "torch.nn.modules.linear.Identity" ||
                           activation->get<std::string>() == "torch.nn.Identity");
    if (!identity)
        throw_input_error(
            file, "activation_function",
            activation == config.end() ? "missing (sentence-transformers then applies Tanh)"
                                       : "is " + activation->dump(),
            "torch.nn.modules.linear.Identity: llama.cpp's graph applies no activation");
    return module;
}

}  // namespace

std::vector<DenseModule> read_dense_modules(const std::filesystem::path& model_dir) {
    const std::filesystem::path modules_file = model_dir / "modules.json";
    std::vector<DenseModule> modules;
    if (!std::filesystem::is_regular_file(modules_file)) return modules;
    const std::string file = modules_file.string();
    const json list = detail::read_json(modules_file);
    if (!list.is_array()) throw_input_error(file, "", "expected a JSON array of modules");
    for (size_t i = 0; i < list.size(); ++i) {
        const json& entry = list[i];
        const std::string where = "modules[" + std::to_string(i) + "]";
        if (!entry.is_object()) throw_input_error(file, where, "expected an object");
        const auto type = entry.find("type");
        if (type == entry.end() || !type->is_string())
            throw_input_error(file, where + ".type", "expected a string");
        if (!type->get_ref<const std::string&>().ends_with("Dense")) continue;
        const auto path = entry.find("path");
        if (path == entry.end() || !path->is_string())
            throw_input_error(file, where + ".path", "expected a string");
        // The converter names "2_Dense" dense_2 and every other folder dense_3: only the two
        // folders llama.cpp's graph has a place for, in that order, once each.
        const std::string folder = path->get<std::string>();
        const char* want = modules.empty() ? "2_Dense" : "3_Dense";
        if (folder != want || modules.size() >= 2)
            throw_input_error(file, where + ".path",
                              "'" + folder +
                                  "' is not where llama.cpp's gemma-embedding graph "
                                  "takes a Dense module",
                              modules.size() >= 2 ? "at most two Dense modules (2_Dense, 3_Dense)"
                                                  : std::string(want));
        modules.push_back(read_module(model_dir, folder));
    }
    return modules;
}

}  // namespace rebox
