// rebox split / rebox merge: shard sets compatible with llama-gguf-split and llama.cpp's loader.
#include <cstdio>

#include "commands.hpp"
#include "rebox/format/gguf_shards.hpp"

namespace rebox::cli {

int run_split(const SplitArgs& args) {
    SplitLimits limits;
    if (args.max_size) limits.max_bytes = parse_split_size(*args.max_size);
    limits.max_tensors = args.max_tensors;
    limits.no_tensor_first_split = args.no_tensor_first_split;
    const auto paths = split_gguf_file(args.input, args.out_prefix, limits, args.force);
    for (const auto& path : paths) std::printf("wrote %s\n", path.c_str());
    return 0;
}

int run_merge(const MergeArgs& args) {
    merge_gguf_files(args.first_shard, args.output, args.force);
    std::printf("wrote %s\n", args.output.c_str());
    return 0;
}

}  // namespace rebox::cli
