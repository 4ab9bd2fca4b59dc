// rebox split / merge: byte copies of tensor data between GGUF files, all outputs written to
// temporary files and renamed into place only when every one of them is complete (commit_all: the
// old files or the whole new set, never a mix).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "format/atomic_output.hpp"
#include "format/atomic_output_set.hpp"
#include "format/gguf_shards.hpp"
#include "format/mapped_file.hpp"
#include "rebox/error.hpp"

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

constexpr const char* kMergeUsage =
    "rebox merge FIRST_SHARD OUT.gguf: the first shard only, then a new file; a glob such as "
    "model-*.gguf expands to every shard";
constexpr const char* kSplitUsage =
    "rebox split IN.gguf OUT_PREFIX: OUT_PREFIX gets -0000i-of-0000N.gguf appended and must not "
    "name the input's shards";

std::string human_bytes(uint64_t bytes) {
    char text[64];
    const bool giga = bytes >= 1000000000ull;
    std::snprintf(text, sizeof text, "%.2f %s (%llu bytes)",
                  static_cast<double>(bytes) / (giga ? 1e9 : 1e6), giga ? "GB" : "MB",
                  static_cast<unsigned long long>(bytes));
    return text;
}

// Refuses to start when the output folder's free space (statvfs f_bavail) is less than `needed`.
void check_free_space(const std::filesystem::path& output, uint64_t needed) {
    std::filesystem::path dir = output.parent_path();
    if (dir.empty()) dir = ".";
    struct statvfs fs {};
    if (::statvfs(dir.c_str(), &fs) != 0) return;  // the output code reports what is wrong
    const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (free_bytes < needed)
        throw_input_error(dir.string(), "free space",
                          "the output needs " + human_bytes(needed) + " but only " +
                              human_bytes(free_bytes) + " are free; nothing was written",
                          "free space or another output folder");
}

struct SplitPlan {
    ShardedLayout sharded;
    std::vector<std::filesystem::path> paths;
};

SplitPlan make_split_plan(const GgufSet& source, const std::filesystem::path& input,
                          const std::string& out_prefix, const SplitLimits& limits) {
    std::vector<GgufTensorInfo> infos;
    for (const auto& t : source.tensors()) infos.push_back(*t.info);
    if (limits.max_bytes == 0 && limits.max_tensors == 0 && !limits.no_tensor_first_split)
        throw_input_error(input.string(), "split", "no limit given",
                          "--split-max-size or --split-max-tensors");
    SplitPlan plan{make_sharded_layout(source.kvs(), infos, limits), {}};
    const uint32_t count = static_cast<uint32_t>(plan.sharded.shards.size());
    uint64_t total = 0;
    for (uint32_t s = 0; s < count; ++s) {
        plan.paths.emplace_back(shard_path(out_prefix, s, count));
        refuse_overwriting_input(source, plan.paths.back(), kSplitUsage);
        total += plan.sharded.shards[s].file_size();
    }
    check_free_space(plan.paths.front(), total);
    return plan;
}

GgufLayout make_merge_layout(const GgufSet& source, const std::filesystem::path& first_shard,
                             const std::filesystem::path& output) {
    if (source.shard_count() < 2 && source.shard(0).find(kSplitCountKey) == nullptr)
        throw_input_error(first_shard.string(), std::string(kSplitCountKey),
                          "missing: not a split GGUF");
    refuse_overwriting_input(source, output, kMergeUsage);
    GgufLayout layout;
    for (const GgufKV& kv : source.kvs()) layout.add_kv(kv.key, kv.value);
    for (const auto& t : source.tensors())
        layout.add_tensor(t.info->name, t.info->ne, t.info->type);
    check_free_space(output, layout.file_size());
    return layout;
}

}  // namespace

void refuse_overwriting_input(const GgufSet& set, const std::filesystem::path& output,
                              const std::string& usage) {
    struct stat out {};
    if (::stat(output.c_str(), &out) != 0) return;
    for (size_t i = 0; i < set.shard_count(); ++i) {
        struct stat in {};
        const std::string& path = set.shard(i).display_name();
        if (::stat(path.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            throw_input_error(output.string(), "output",
                              "is " +
                                  (set.shard_count() > 1 ? "shard " + std::to_string(i + 1) +
                                                               " of the input set (" + path + ")"
                                                         : "the input file (" + path + ")") +
                                  ", so writing it would destroy the input; nothing was written",
                              usage);
    }
}

std::vector<PlannedOutput> plan_split_gguf(const std::filesystem::path& input,
                                           const std::string& out_prefix,
                                           const SplitLimits& limits) {
    const GgufSet source = GgufSet::open(input);
    const SplitPlan plan = make_split_plan(source, input, out_prefix, limits);
    std::vector<PlannedOutput> out;
    for (size_t s = 0; s < plan.paths.size(); ++s)
        out.push_back({plan.paths[s], plan.sharded.shards[s].file_size(),
                       plan.sharded.shards[s].tensors().size()});
    return out;
}

PlannedOutput plan_merge_gguf(const std::filesystem::path& first_shard,
                              const std::filesystem::path& output) {
    const GgufSet source = GgufSet::open(first_shard);
    const GgufLayout layout = make_merge_layout(source, first_shard, output);
    return {output, layout.file_size(), layout.tensors().size()};
}

std::vector<std::filesystem::path> split_gguf_file(const std::filesystem::path& input,
                                                   const std::string& out_prefix,
                                                   const SplitLimits& limits, bool force) {
    const GgufSet source = GgufSet::open(input);
    const SplitPlan plan = make_split_plan(source, input, out_prefix, limits);
    const ShardedLayout& sharded = plan.sharded;
    const std::vector<std::filesystem::path>& paths = plan.paths;
    const uint32_t count = static_cast<uint32_t>(sharded.shards.size());
    std::vector<std::unique_ptr<AtomicOutput>> outputs;
    for (uint32_t s = 0; s < count; ++s)
        outputs.push_back(std::make_unique<AtomicOutput>(paths[s], force));
    // Tensors of shard s, in order: input tensors whose place is shard s.
    std::vector<std::vector<size_t>> members(count);
    for (size_t i = 0; i < sharded.places.size(); ++i)
        members[sharded.places[i].shard].push_back(i);
    const ShardFds fds(source);
    for (uint32_t s = 0; s < count; ++s)
        write_layout(
            *outputs[s], sharded.shards[s], source, fds,
            [&](size_t i) -> const GgufSet::Tensor& { return source.tensors()[members[s][i]]; });
    commit_all(outputs);  // all or nothing, shard 1 last
    return paths;
}

void merge_gguf_files(const std::filesystem::path& first_shard, const std::filesystem::path& output,
                      bool force) {
    const GgufSet source = GgufSet::open(first_shard);
    const GgufLayout layout = make_merge_layout(source, first_shard, output);
    AtomicOutput out(output, force);
    const ShardFds fds(source);
    write_layout(out, layout, source, fds,
                 [&](size_t i) -> const GgufSet::Tensor& { return source.tensors()[i]; });
    out.commit();
}

}  // namespace rebox
