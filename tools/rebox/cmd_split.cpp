// rebox split / rebox merge: shard sets compatible with llama-gguf-split and llama.cpp's loader.
// --dry-run prints what would be written; extra positionals to merge (a shell glob) are refused
// with the argument order explained.
#include <cstdio>

#include "commands.hpp"
#include "format/gguf_shards.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {
namespace {

void print_planned(const PlannedOutput& out) {
    std::printf("would write %s (%zu tensors, %llu bytes)\n", out.path.c_str(), out.tensors,
                static_cast<unsigned long long>(out.bytes));
}

}  // namespace

int run_split(const SplitArgs& args) {
    SplitLimits limits;
    if (args.max_size) limits.max_bytes = parse_split_size(*args.max_size);
    limits.max_tensors = args.max_tensors;
    limits.no_tensor_first_split = args.no_tensor_first_split;
    if (args.dry_run) {
        for (const PlannedOutput& out : plan_split_gguf(args.input, args.out_prefix, limits))
            print_planned(out);
        return 0;
    }
    const auto paths = split_gguf_file(args.input, args.out_prefix, limits, args.force);
    for (const auto& path : paths) std::printf("wrote %s\n", path.c_str());
    return 0;
}

int run_merge(const MergeArgs& args) {
    if (!args.extra.empty())
        throw Error(ExitClass::input,
                    "merge: " + std::to_string(args.extra.size() + 2) + " file arguments given (" +
                        args.first_shard + ", " + args.output + ", " + args.extra.front() +
                        (args.extra.size() > 1 ? ", ..." : "") +
                        "); nothing was written (expected rebox merge FIRST_SHARD OUT.gguf: the "
                        "first shard only, then a new file; a glob such as model-*.gguf expands "
                        "to every shard)");
    if (args.dry_run) {
        print_planned(plan_merge_gguf(args.first_shard, args.output));
        return 0;
    }
    merge_gguf_files(args.first_shard, args.output, args.force);
    std::printf("wrote %s\n", args.output.c_str());
    return 0;
}

}  // namespace rebox::cli
