// Opening a possibly split GGUF model from its first shard, with the checks llama.cpp's loader
// makes (split.no of each shard, the derived shard names, the total tensor count, unique tensor
// names).
#include <unordered_set>

#include "format/gguf_shards.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

// A split key's value, typed strictly; nullopt when absent.
template <typename Get>
auto split_value(const GgufFile& file, std::string_view key, const char* type_name, Get get)
    -> decltype(get(std::declval<const GgufValue&>())) {
    const GgufValue* value = file.find(key);
    if (value == nullptr) return std::nullopt;
    auto typed = get(*value);
    if (!typed)
        throw_input_error(file.display_name(), std::string(key), "has the wrong type", type_name);
    return typed;
}

std::optional<uint16_t> get_u16(const GgufFile& file, std::string_view key) {
    return split_value(file, key, "UINT16", [](const GgufValue& v) { return v.as_u16(); });
}

bool is_split_key(std::string_view key) {
    return key == kSplitNoKey || key == kSplitCountKey || key == kSplitTensorsCountKey;
}

}  // namespace

GgufSet GgufSet::open(const std::filesystem::path& first) {
    GgufSet set;
    set.shards_.push_back(GgufFile::open(first));
    const uint16_t count = get_u16(*set.shards_.front(), kSplitCountKey).value_or(0);
    if (count > 1) {
        const auto prefix = shard_prefix(first.string(), 0, count);
        if (!prefix)
            throw_input_error(first.string(), "file name",
                              "does not end in " + shard_path("", 0, count) +
                                  " although split.count is " + std::to_string(count) +
                                  " (open the first shard)");
        for (uint32_t i = 1; i < count; ++i) {
            const std::string path = shard_path(*prefix, i, count);
            if (!std::filesystem::exists(path))
                throw_input_error(path, "",
                                  "shard " + std::to_string(i + 1) + " of " +
                                      std::to_string(count) + " is missing");
            set.shards_.push_back(GgufFile::open(path));
        }
    }
    set.check_and_index();
    return set;
}

GgufSet GgufSet::open_files(const std::vector<std::filesystem::path>& shards) {
    GgufSet set;
    for (const auto& path : shards) set.shards_.push_back(GgufFile::open(path));
    if (shards.size() > 1 || (!shards.empty() && set.shards_[0]->find(kSplitCountKey) != nullptr)) {
        const uint16_t count = get_u16(*set.shards_.front(), kSplitCountKey).value_or(0);
        if (count != shards.size())
            throw_input_error(shards[0].string(), std::string(kSplitCountKey),
                              "is " + std::to_string(count), std::to_string(shards.size()));
    }
    set.check_and_index();
    return set;
}

void GgufSet::check_and_index() {
    const GgufFile& head = *shards_.front();
    const uint16_t count = get_u16(head, kSplitCountKey).value_or(0);
    if (count > 1) {
        for (uint32_t i = 0; i < shards_.size(); ++i) {
            const GgufFile& shard = *shards_[i];
            const auto shard_no = get_u16(shard, kSplitNoKey);
            const auto shard_count = get_u16(shard, kSplitCountKey);
            if (!shard_no || *shard_no != i || !shard_count || *shard_count != count)
                throw_input_error(shard.display_name(), std::string(kSplitNoKey),
                                  "is not shard " + std::to_string(i + 1) + " of a " +
                                      std::to_string(count) +
                                      "-shard set (wrong order, renamed, or from another split)");
        }
    }
    for (const GgufKV& kv : head.kvs())
        if (!is_split_key(kv.key)) kvs_.push_back(kv);

    std::unordered_set<std::string_view> names;
    for (size_t s = 0; s < shards_.size(); ++s) {
        for (const GgufTensorInfo& info : shards_[s]->tensors()) {
            if (!names.insert(info.name).second)
                throw_input_error(shards_[s]->display_name(), info.name,
                                  "tensor name appears in more than one shard");
            tensors_.push_back({&info, s});
        }
    }
    if (count > 1) {
        const GgufValue* total = head.find(kSplitTensorsCountKey);
        const auto expected = total ? total->as_i32() : std::nullopt;
        if (!expected || *expected < 0 || static_cast<size_t>(*expected) != tensors_.size())
            throw_input_error(head.display_name(), std::string(kSplitTensorsCountKey),
                              "the shards hold " + std::to_string(tensors_.size()) + " tensors",
                              expected ? std::to_string(*expected) : std::string("an INT32 count"));
    }
}

const GgufValue* GgufSet::find(std::string_view key) const {
    for (const GgufKV& kv : kvs_)
        if (kv.key == key) return &kv.value;
    return nullptr;
}

const GgufSet::Tensor* GgufSet::find_tensor(std::string_view name) const {
    for (const Tensor& t : tensors_)
        if (t.info->name == name) return &t;
    return nullptr;
}

std::span<const uint8_t> GgufSet::tensor_data(const Tensor& tensor) const {
    return shards_[tensor.shard]->tensor_data(*tensor.info);
}

}  // namespace rebox
