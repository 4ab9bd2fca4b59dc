// Split GGUF sets as llama.cpp's llama-gguf-split writes and loads them (docs/gguf.md §6): shard
// names "<prefix>-%05d-of-%05d.gguf", split.no (UINT16, 0-based), split.count (UINT16) and
// split.tensors.count (INT32) in every shard, all other KVs in the first shard only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf_file.hpp"
#include "format/gguf_layout.hpp"
#include "rebox/rebox.hpp"

namespace rebox {

inline constexpr std::string_view kSplitNoKey = "split.no";
inline constexpr std::string_view kSplitCountKey = "split.count";
inline constexpr std::string_view kSplitTensorsCountKey = "split.tensors.count";
inline constexpr uint32_t kMaxShards = 65535;  // split.count is a UINT16

// "<prefix>-00002-of-00005.gguf" for index 1 of 5 (index is 0-based, as split.no).
std::string shard_path(const std::string& prefix, uint32_t index, uint32_t count);
// The files a writer creates for `output`: output itself, or with split set its shards
// "<output without .gguf>-0000i-of-0000N.gguf" (rebox convert and rebox quantize).
std::vector<std::filesystem::path> output_paths(const std::filesystem::path& output, size_t shards,
                                                bool split);
// The mmproj file beside a text model's output: "DIR/NAME.gguf" -> "DIR/mmproj-NAME.gguf" (the
// prefix llama.cpp's converter, LM Studio and llama.cpp's -hf download look for).
std::filesystem::path mmproj_path_beside(const std::filesystem::path& output);
// The prefix of a shard name ending in "-%05d-of-%05d.gguf" with these numbers; nullopt otherwise.
std::optional<std::string> shard_prefix(const std::string& path, uint32_t index, uint32_t count);

// Distributes tensors in order over shards: a new shard starts when adding the next tensor would
// pass max_bytes (a tensor larger than the limit goes alone in its shard) or the count limit is
// reached. Returns one layout per shard, each with the split keys; the first also carries `kvs`
// (before the split keys). With no limits and !no_tensor_first_split the result is one layout
// WITHOUT split keys.
struct ShardedLayout {
    std::vector<GgufLayout> shards;
    struct Place {
        size_t shard;
        size_t index;
    };
    std::vector<Place> places;  // per input tensor, in input order
};
ShardedLayout make_sharded_layout(const std::vector<GgufKV>& kvs,
                                  const std::vector<GgufTensorInfo>& tensors,
                                  const SplitLimits& limits);

// A GGUF model that may be split: opening the first shard finds and checks the others (each shard's
// split.no, split.count, the total tensor count, unique names across shards). A plain file is a set
// of one.
class GgufSet {
  public:
    static GgufSet open(const std::filesystem::path& first);
    // The shards given in order (e.g. temporary files before their final names exist); the same
    // checks as open() except the file names.
    static GgufSet open_files(const std::vector<std::filesystem::path>& shards);

    size_t shard_count() const { return shards_.size(); }
    const GgufFile& shard(size_t i) const { return *shards_[i]; }
    // KVs of the first shard without the split.* keys.
    const std::vector<GgufKV>& kvs() const { return kvs_; }
    const GgufValue* find(std::string_view key) const;
    struct Tensor {
        const GgufTensorInfo* info;
        size_t shard;
    };
    const std::vector<Tensor>& tensors() const { return tensors_; }  // shard order, then file order
    const Tensor* find_tensor(std::string_view name) const;
    std::span<const uint8_t> tensor_data(const Tensor& tensor) const;

  private:
    void check_and_index();

    std::vector<std::unique_ptr<GgufFile>> shards_;
    std::vector<GgufKV> kvs_;
    std::vector<Tensor> tensors_;
};

// Refuses (input-class error) an output path that is, by device and inode, one of the set's shards;
// `usage` is the fix the message suggests.
void refuse_overwriting_input(const GgufSet& set, const std::filesystem::path& output,
                              const std::string& usage);

// rebox split / merge: streaming copies through AtomicOutput; every output appears whole or not at
// all. Both refuse an output that is one of the input files (same inode: a shell glob that put a
// shard in the output position) and check the free space of the output folder first.
std::vector<std::filesystem::path> split_gguf_file(const std::filesystem::path& input,
                                                   const std::string& out_prefix,
                                                   const SplitLimits& limits, bool force);
void merge_gguf_files(const std::filesystem::path& first_shard, const std::filesystem::path& output,
                      bool force);

// What split / merge would write (--dry-run). The same checks run as for the real thing (input
// set, limits, output-is-input, free space); nothing is created.
std::vector<PlannedOutput> plan_split_gguf(const std::filesystem::path& input,
                                           const std::string& out_prefix,
                                           const SplitLimits& limits);
PlannedOutput plan_merge_gguf(const std::filesystem::path& first_shard,
                              const std::filesystem::path& output);

}  // namespace rebox
