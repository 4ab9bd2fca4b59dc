// rebox split / merge: byte copies of tensor data between GGUF files, all outputs written to
// temporary files and renamed into place only when every one of them is complete.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "rebox/error.hpp"
#include "rebox/format/atomic_output.hpp"
#include "rebox/format/gguf_shards.hpp"
#include "rebox/format/mapped_file.hpp"

namespace rebox {
namespace {

// Read-only descriptors of every shard of a set, closed on destruction. Tensor bytes are copied
// file to file inside the kernel, so nothing of the input is mapped or held in memory.
class ShardFds {
  public:
    explicit ShardFds(const GgufSet& set) {
        for (size_t i = 0; i < set.shard_count(); ++i) {
            const std::string& path = set.shard(i).display_name();
            const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                throw_input_error(path, "", std::string("cannot open: ") + std::strerror(errno));
            fds_.push_back(fd);
        }
    }
    ~ShardFds() {
        for (int fd : fds_) ::close(fd);
    }
    ShardFds(const ShardFds&) = delete;
    ShardFds& operator=(const ShardFds&) = delete;
    int operator[](size_t shard) const { return fds_[shard]; }

  private:
    std::vector<int> fds_;
};

// Writes one layout whose tensor i is the input tensor source_tensor(i) of the set.
template <typename SourceTensorOf>
void write_layout(AtomicOutput& out, const GgufLayout& layout, const GgufSet& set,
                  const ShardFds& fds, SourceTensorOf source_tensor) {
    out.resize(layout.file_size());
    out.pwrite(layout.serialize_metadata(), 0);
    const uint64_t base = layout.data_offset();
    for (size_t i = 0; i < layout.tensors().size(); ++i) {
        const GgufTensorInfo& info = layout.tensors()[i];
        const GgufSet::Tensor& from = source_tensor(i);
        if (from.info->nbytes != info.nbytes)
            throw_input_error(info.name, "", "tensor size changed while copying");
        const GgufFile& shard = set.shard(from.shard);
        out.copy_from(fds[from.shard], shard.data_offset() + from.info->offset, info.nbytes,
                      base + info.offset);
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
    const ShardFds fds(source);
    for (uint32_t s = 0; s < count; ++s)
        write_layout(
            *outputs[s], sharded.shards[s], source, fds,
            [&](size_t i) -> const GgufSet::Tensor& { return source.tensors()[members[s][i]]; });
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
    const ShardFds fds(source);
    write_layout(out, layout, source, fds,
                 [&](size_t i) -> const GgufSet::Tensor& { return source.tensors()[i]; });
    out.commit();
}

}  // namespace rebox
