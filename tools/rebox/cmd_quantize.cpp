// rebox quantize IN.gguf OUT.gguf TYPE: llama-quantize's file for the same arguments (type names,
// option names and their meaning are llama-quantize's), one report line per tensor whose type is
// not the file type's, and an optional JSON report with every tensor.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "convert_options.hpp"
#include "gguf_tool_commands.hpp"
#include "rebox/rebox.hpp"
#include "report_json.hpp"

namespace rebox::cli {
namespace {

struct QuantizeArgs {
    std::string input;
    std::string output;
    QuantizeOptions options;
    std::optional<std::string> split_max_size;
    std::optional<std::string> json_report;
    bool quiet = false;
};

int run_quantize(QuantizeArgs& args) {
    expand_tensor_type_files(args.options.tensor_types);
    if (args.split_max_size) args.options.split.max_bytes = parse_split_size(*args.split_max_size);
    const QuantizeReport report = quantize_gguf(args.input, args.output, args.options);
    if (!args.quiet) print_quantize_report(report);
    if (args.json_report) write_json_file(*args.json_report, quantize_report_to_json(report));
    return 0;
}

}  // namespace

ToolCommand add_quantize_command(CLI::App& app) {
    auto args = std::make_shared<QuantizeArgs>();
    CLI::App* cmd = app.add_subcommand(
        "quantize", "Quantize a GGUF to Q4_K_M etc.: llama-quantize's file, byte for byte");
    cmd->add_option("IN", args->input, "input .gguf (F32/F16/BF16; a first shard opens its set)")
        ->required();
    cmd->add_option("OUT", args->output, "output .gguf")->required();
    cmd->add_option("TYPE", args->options.type,
                    "Q1_0 Q2_0 Q4_0 Q4_1 MXFP4_MOE Q5_0 Q5_1 IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ1_S "
                    "IQ1_M TQ1_0 TQ2_0 Q8_0 Q2_K Q2_K_S IQ3_XXS IQ3_S IQ3_M IQ3_XS Q3_K_S "
                    "Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS F16 BF16 F32 "
                    "(any case; IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M need --imatrix)")
        ->required();
    QuantizeOptions& o = args->options;
    cmd->add_option("--output-tensor-type", o.output_tensor_type, "type of output.weight");
    cmd->add_option("--token-embedding-type", o.token_embedding_type, "type of token_embd.weight");
    add_tensor_type_options(*cmd, o.tensor_types, "");
    cmd->add_option("--imatrix", o.imatrix,
                    "importance matrix: llama.cpp's GGUF imatrix or a legacy imatrix.dat");
    cmd->add_option("--include-weights", o.include_weights,
                    "use only the imatrix entries whose name contains this (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--exclude-weights", o.exclude_weights,
                    "drop the imatrix entries whose name contains this (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--override-kv", o.override_kvs,
                    "KEY=TYPE:VALUE written into the output (int, float, bool, str; repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--prune-layers", o.prune_layers,
                    "L0,L1,...: drop these layers and renumber the others");
    cmd->add_flag("--pure", o.pure, "every quantized tensor in the file type's own type");
    cmd->add_flag("--leave-output-tensor", o.leave_output_tensor, "keep output.weight as it is");
    cmd->add_flag("--allow-requantize", o.allow_requantize,
                  "requantize already quantized tensors (default: keep them as they are)");
    cmd->add_option("-t,--threads", o.threads, "worker threads (default: all cores)");
    cmd->add_flag("-f,--force", o.force, "replace an existing output file");
    cmd->add_flag("--dry-run", o.dry_run,
                  "show every tensor's type and size and the totals; write nothing");
    cmd->add_option("--split-max-size", args->split_max_size,
                    "write shards of at most this size (N, NM or NG)");
    cmd->add_flag("--keep-split", o.keep_split,
                  "one output per input shard, OUT-0000i-of-0000N.gguf (llama-quantize's)");
    cmd->add_option("--json", args->json_report, "write a JSON report to this file");
    cmd->add_flag("-q,--quiet", args->quiet, "no per-tensor lines");
    return {cmd, [args] { return run_quantize(*args); }};
}

}  // namespace rebox::cli
