// rebox split / merge: byte copies of tensor data between GGUF files, all outputs written to
// temporary files and renamed into place only when every one of them is complete.
#include <memory>

#include "rebox/error.hpp"
#include "rebox/format/atomic_output.hpp"
#include "rebox/format/gguf_shards.hpp"
#include "rebox/format/mapped_file.hpp"

namespace rebox {
namespace {

// The mappings of every shard of a set, for releasing copied pages.
std::vector<const MappedFile*> mappings_of(const GgufSet& set) {
    std::vector<const MappedFile*> mappings;
    for (size_t i = 0; i < set.shard_count(); ++i) mappings.push_back(set.shard(i).mapping());
    return mappings;
}

// Writes one layout whose tensor i gets the bytes data(i); input pages are released once copied so
// memory stays flat however large the model is.
template <typename DataOf>
void write_layout(AtomicOutput& out, const GgufLayout& layout, DataOf data,
                  const std::vector<const MappedFile*>& mappings) {
    out.resize(layout.file_size());
    out.pwrite(layout.serialize_metadata(), 0);
    const uint64_t base = layout.data_offset();
    for (size_t i = 0; i < layout.tensors().size(); ++i) {
        const GgufTensorInfo& info = layout.tensors()[i];
        const std::span<const uint8_t> bytes = data(i);
        if (bytes.size() != info.nbytes)
            throw_input_error(info.name, "", "tensor size changed while copying");
        // Copy in slices so a huge tensor is not touched all at once.
        constexpr size_t kSlice = 64u << 20;
        for (size_t done = 0; done < bytes.size(); done += kSlice)
            out.pwrite(bytes.subspan(done, std::min(kSlice, bytes.size() - done)),
                       base + info.offset + done);
    }
    out.sync();
}

}  // namespace

std::vector<std::filesystem::path> split_gguf_file(const std::filesystem::path& input,
                                                   const std::string& out_prefix,
                                                   const SplitLimits& limits, bool overwrite) {
    const GgufSet source = GgufSet::open(input);
    std::vector<GgufTensorInfo> infos;
    for (const auto& t : source.tensors()) infos.push_back(*t.info);
    if (limits.max_bytes == 0 && limits.max_tensors == 0 && !limits.no_tensor_first_split)
        throw_input_error(input.string(), "split", "no limit given",
                          "--split-max-size or --split-max-tensors");
    const ShardedLayout sharded = make_sharded_layout(source.kvs(), infos, limits);
    const uint32_t count = static_cast<uint32_t>(sharded.shards.size());
    std::vector<std::unique_ptr<AtomicOutput>> outputs;
    std::vector<std::filesystem::path> paths;
    for (uint32_t s = 0; s < count; ++s) {
        paths.emplace_back(shard_path(out_prefix, s, count));
        outputs.push_back(std::make_unique<AtomicOutput>(paths.back(), overwrite));
    }
    // Tensors of shard s, in order: input tensors whose place is shard s.
    std::vector<std::vector<size_t>> members(count);
    for (size_t i = 0; i < sharded.places.size(); ++i)
        members[sharded.places[i].shard].push_back(i);
    for (uint32_t s = 0; s < count; ++s) {
        write_layout(
            *outputs[s], sharded.shards[s],
            [&](size_t i) { return source.tensor_data(source.tensors()[members[s][i]]); },
            mappings_of(source));
    }
    for (auto& out : outputs) out->commit();
    return paths;
}

void merge_gguf_files(const std::filesystem::path& first_shard, const std::filesystem::path& output,
                      bool overwrite) {
    const GgufSet source = GgufSet::open(first_shard);
    if (source.shard_count() < 2 && source.shard(0).find(kSplitCountKey) == nullptr)
        throw_input_error(first_shard.string(), std::string(kSplitCountKey),
                          "missing: not a split GGUF");
    GgufLayout layout;
    for (const GgufKV& kv : source.kvs()) layout.add_kv(kv.key, kv.value);
    for (const auto& t : source.tensors())
        layout.add_tensor(t.info->name, t.info->ne, t.info->type);
    AtomicOutput out(output, overwrite);
    write_layout(
        out, layout, [&](size_t i) { return source.tensor_data(source.tensors()[i]); },
        mappings_of(source));
    out.commit();
}

}  // namespace rebox
