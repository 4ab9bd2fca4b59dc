// SafetensorsModel: one model.safetensors, or the shards named by model.safetensors.index.json.
// The index is checked against the shards: every shard exists beside the index, every tensor is in
// the shard the index names, and no shard holds a tensor the index does not assign to it.
#include <simdjson.h>

#include <system_error>
#include <unordered_map>

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
    std::vector<std::string> shard_order;  // first appearance
    struct Entry {
        std::string tensor;
        size_t shard = 0;  // into shard_order
    };
    std::vector<Entry> entries;  // index order
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
    NameIndex seen_tensors;  // positions in result.entries
    seen_tensors.reserve(weight_map.size());
    const auto tensor_at = [&](size_t i) -> std::string_view { return result.entries[i].tensor; };
    std::unordered_map<std::string_view, size_t> shard_slot;  // views into the parsed index
    for (auto [tensor, shard_value] : weight_map) {
        if (seen_tensors.find(tensor, tensor_at) != NameIndex::npos)
            throw_input_error(file, "weight_map." + printable(tensor), "duplicate tensor name",
                              "unique names");
        std::string_view shard;
        if (shard_value.get(shard) != simdjson::SUCCESS)
            throw_input_error(file, "weight_map." + printable(tensor), "shard is not a string",
                              "a shard file name");
        const auto [slot, added] = shard_slot.emplace(shard, result.shard_order.size());
        if (added) {
            if (!is_plain_file_name(shard))
                throw_input_error(file, "weight_map." + printable(tensor),
                                  "shard \"" + printable(shard) + "\" is not a plain file name",
                                  "a file beside the index, without path separators or \"..\"");
            result.shard_order.emplace_back(shard);
        }
        result.entries.push_back(WeightMap::Entry{std::string(tensor), slot->second});
        seen_tensors.insert_absent(tensor, result.entries.size() - 1);
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
    for (const std::string& shard : weight_map.shard_order) {
        const std::filesystem::path shard_path = model_dir / shard;
        std::error_code error;
        if (!std::filesystem::is_regular_file(shard_path, error))
            throw_input_error(
                index_file, "weight_map",
                "shard \"" + printable(shard) + "\" does not exist in " + model_dir.string(),
                "every shard named by the index beside it");
        files.push_back(SafetensorsFile::open(shard_path));
    }

    // Every index entry names a tensor its shard really holds (the shard's own index answers),
    // and every shard tensor is assigned to that shard (no unlisted tensors, no tensor in two
    // shards: the index names one shard per tensor, so the other copy is unlisted).
    std::vector<std::vector<bool>> listed(files.size());
    for (size_t i = 0; i < files.size(); ++i) listed[i].assign(files[i]->tensors().size(), false);
    for (const WeightMap::Entry& entry : weight_map.entries) {
        const SafetensorsFile& shard = *files[entry.shard];
        const StTensorInfo* info = shard.find(entry.tensor);
        if (info == nullptr)
            throw_input_error(
                index_file, "weight_map." + printable(entry.tensor),
                "tensor is not in shard \"" + printable(weight_map.shard_order[entry.shard]) + "\"",
                "the shard the index names to hold it");
        listed[entry.shard][static_cast<size_t>(info - shard.tensors().data())] = true;
    }
    for (size_t i = 0; i < files.size(); ++i)
        for (size_t t = 0; t < listed[i].size(); ++t)
            if (!listed[i][t])
                throw_input_error(
                    files[i]->display_name(), printable(files[i]->tensors()[t].name),
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
    // One file answers look-ups from its own index; shards from one across the files (names are
    // unique across them: open_shards refused a tensor in two). located_ holds every tensor in
    // file order, the positions both indexes give.
    size_t count = 0;
    for (const auto& file : model.files_) count += file->tensors().size();
    model.located_.reserve(count);
    for (const auto& file : model.files_)
        for (const StTensorInfo& tensor : file->tensors())
            model.located_.push_back(StLocated{file.get(), &tensor});
    if (model.files_.size() > 1) {
        model.index_by_name_.reserve(count);
        for (size_t i = 0; i < model.located_.size(); ++i)
            model.index_by_name_.insert_absent(model.located_[i].info->name, i);
    }
    return model;
}

const StLocated* SafetensorsModel::find(std::string_view name) const {
    if (files_.size() == 1) {
        const StTensorInfo* info = files_.front()->find(name);
        return info == nullptr ? nullptr : &located_[info - files_.front()->tensors().data()];
    }
    const size_t at = index_by_name_.find(
        name, [this](size_t i) -> std::string_view { return located_[i].info->name; });
    return at == NameIndex::npos ? nullptr : &located_[at];
}

}  // namespace rebox
