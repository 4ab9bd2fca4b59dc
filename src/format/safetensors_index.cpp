// SafetensorsModel: one model.safetensors, or the shards named by model.safetensors.index.json.
// The index is checked against the shards: every shard exists beside the index, every tensor is in
// the shard the index names, and no shard holds a tensor the index does not assign to it.
#include <simdjson.h>

#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include "format/safetensors.hpp"
#include "printable.hpp"
#include "rebox/error.hpp"

namespace rebox {

namespace {

using detail::printable;

constexpr uint64_t kMaxIndexBytes = 100ull * 1024 * 1024;

bool is_plain_file_name(std::string_view name) {
    return !name.empty() && name.find('/') == std::string_view::npos &&
           name.find('\\') == std::string_view::npos && name.find("..") == std::string_view::npos &&
           name != "." && name.find('\0') == std::string_view::npos;
}

struct WeightMap {
    std::vector<std::string> shard_order;                      // first appearance
    std::vector<std::pair<std::string, std::string>> entries;  // tensor -> shard, index order
};

WeightMap read_weight_map(const std::filesystem::path& index_path) {
    const std::string file = index_path.string();
    const MappedFile mapped(index_path);
    if (mapped.size() > kMaxIndexBytes)
        throw_input_error(file, "", "index is " + std::to_string(mapped.size()) + " bytes",
                          "at most " + std::to_string(kMaxIndexBytes) + " bytes");
    const simdjson::padded_string text(reinterpret_cast<const char*>(mapped.bytes().data()),
                                       mapped.size());
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (const auto error = parser.parse(text).get(root); error != simdjson::SUCCESS)
        throw_input_error(file, "",
                          std::string("not valid JSON: ") + simdjson::error_message(error),
                          "a JSON object with \"weight_map\"");
    simdjson::dom::object weight_map;
    if (root["weight_map"].get(weight_map) != simdjson::SUCCESS)
        throw_input_error(file, "weight_map", "missing or not an object",
                          "an object mapping tensor names to shard files");

    WeightMap result;
    std::unordered_set<std::string_view> seen_tensors;
    std::unordered_set<std::string> seen_shards;
    for (auto [tensor, shard_value] : weight_map) {
        const std::string field = "weight_map." + printable(tensor);
        if (!seen_tensors.insert(tensor).second)
            throw_input_error(file, field, "duplicate tensor name", "unique names");
        std::string_view shard;
        if (shard_value.get(shard) != simdjson::SUCCESS)
            throw_input_error(file, field, "shard is not a string", "a shard file name");
        if (!is_plain_file_name(shard))
            throw_input_error(file, field,
                              "shard \"" + printable(shard) + "\" is not a plain file name",
                              "a file beside the index, without path separators or \"..\"");
        if (seen_shards.insert(std::string(shard)).second) result.shard_order.emplace_back(shard);
        result.entries.emplace_back(std::string(tensor), std::string(shard));
    }
    if (result.entries.empty())
        throw_input_error(file, "weight_map", "is empty", "at least one tensor");
    return result;
}

std::vector<std::shared_ptr<SafetensorsFile>> open_shards(const std::filesystem::path& model_dir,
                                                          const std::filesystem::path& index_path) {
    const std::string index_file = index_path.string();
    const WeightMap weight_map = read_weight_map(index_path);

    std::vector<std::shared_ptr<SafetensorsFile>> files;
    std::unordered_map<std::string, size_t> shard_slot;
    for (const std::string& shard : weight_map.shard_order) {
        const std::filesystem::path shard_path = model_dir / shard;
        std::error_code error;
        if (!std::filesystem::is_regular_file(shard_path, error))
            throw_input_error(
                index_file, "weight_map",
                "shard \"" + printable(shard) + "\" does not exist in " + model_dir.string(),
                "every shard named by the index beside it");
        shard_slot.emplace(shard, files.size());
        files.push_back(SafetensorsFile::open(shard_path));
    }

    // Every index entry names a tensor its shard really holds, and every shard tensor is assigned
    // to that shard (no unlisted tensors, no tensor in two shards).
    std::vector<std::unordered_map<std::string_view, bool>> assigned(files.size());
    for (size_t i = 0; i < files.size(); ++i)
        for (const StTensorInfo& tensor : files[i]->tensors())
            assigned[i].emplace(tensor.name, false);
    for (const auto& [tensor, shard] : weight_map.entries) {
        const size_t slot = shard_slot.at(shard);
        const auto found = assigned[slot].find(tensor);
        if (found == assigned[slot].end())
            throw_input_error(index_file, "weight_map." + printable(tensor),
                              "tensor is not in shard \"" + printable(shard) + "\"",
                              "the shard the index names to hold it");
        found->second = true;
    }
    for (size_t i = 0; i < files.size(); ++i)
        for (const auto& [tensor, listed] : assigned[i])
            if (!listed)
                throw_input_error(
                    files[i]->display_name(), printable(tensor),
                    "tensor is not assigned to this shard by " + index_path.filename().string(),
                    "every shard tensor listed in weight_map");
    return files;
}

}  // namespace

SafetensorsModel SafetensorsModel::open(const std::filesystem::path& model_dir) {
    const std::filesystem::path single = model_dir / "model.safetensors";
    const std::filesystem::path index = model_dir / "model.safetensors.index.json";
    std::error_code error;
    SafetensorsModel model;
    if (std::filesystem::exists(single, error)) {
        model.files_.push_back(SafetensorsFile::open(single));
    } else if (std::filesystem::exists(index, error)) {
        model.files_ = open_shards(model_dir, index);
    } else {
        throw_input_error(model_dir.string(), "",
                          "no model.safetensors or model.safetensors.index.json",
                          "a safetensors checkpoint directory");
    }
    for (const auto& file : model.files_)
        for (const StTensorInfo& tensor : file->tensors())
            model.index_by_name_.emplace(tensor.name, StLocated{file.get(), &tensor});
    return model;
}

const StLocated* SafetensorsModel::find(std::string_view name) const {
    const auto found = index_by_name_.find(name);
    return found == index_by_name_.end() ? nullptr : &found->second;
}

}  // namespace rebox
