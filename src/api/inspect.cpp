// inspect_gguf() and inspect_safetensors(): the checked readers' view of a file as public data.
#include "format/gguf_shards.hpp"
#include "format/safetensors.hpp"
#include "rebox/rebox.hpp"

namespace rebox {

GgufInfo inspect_gguf(const std::filesystem::path& path) {
    const GgufSet set = GgufSet::open(path);
    GgufInfo info;
    const GgufFile& first = set.shard(0);
    info.version = first.version();
    info.alignment = first.alignment();
    info.kvs = set.kvs();
    for (size_t i = 0; i < set.shard_count(); ++i) info.bytes += set.shard(i).file_size();
    // GgufSet::open found the other shards from the first one's name and split.count.
    const auto prefix =
        set.shard_count() > 1
            ? shard_prefix(path.string(), 0, static_cast<uint32_t>(set.shard_count()))
            : std::nullopt;
    for (size_t i = 0; i < set.shard_count(); ++i)
        info.files.push_back(
            prefix ? std::filesystem::path(shard_path(*prefix, static_cast<uint32_t>(i),
                                                      static_cast<uint32_t>(set.shard_count())))
                   : path);
    for (const GgufSet::Tensor& t : set.tensors()) info.tensors.push_back({*t.info, t.shard});
    return info;
}

SafetensorsInfo inspect_safetensors(const std::filesystem::path& path) {
    const auto file = SafetensorsFile::open(path);
    SafetensorsInfo info;
    info.header_bytes = file->header_size();
    info.metadata = file->metadata();
    for (const StTensorInfo& t : file->tensors())
        info.tensors.push_back(
            {t.name, std::string(st_dtype_name(t.dtype)), t.shape, t.begin, t.end});
    return info;
}

}  // namespace rebox
