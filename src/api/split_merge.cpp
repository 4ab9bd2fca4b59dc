// split_gguf() and merge_gguf(): the streaming split/merge of format/ behind the public options.
#include "format/gguf_shards.hpp"
#include "rebox/rebox.hpp"

namespace rebox {

std::vector<PlannedOutput> split_gguf(const std::filesystem::path& input,
                                      const std::string& out_prefix, const SplitOptions& options) {
    std::vector<PlannedOutput> planned = plan_split_gguf(input, out_prefix, options.limits);
    if (!options.dry_run) split_gguf_file(input, out_prefix, options.limits, options.force);
    return planned;
}

PlannedOutput merge_gguf(const std::filesystem::path& first_shard,
                         const std::filesystem::path& output, const MergeOptions& options) {
    PlannedOutput planned = plan_merge_gguf(first_shard, output);
    if (!options.dry_run) merge_gguf_files(first_shard, output, options.force);
    return planned;
}

}  // namespace rebox
