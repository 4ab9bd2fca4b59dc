// rebox quantize IN.gguf OUT.gguf TYPE: llama-quantize's file for the same arguments (type names,
// option names and their meaning are llama-quantize's), one report line per tensor whose type is
// not the file type's, and an optional JSON report with every tensor.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

nlohmann::json report_json(const QuantizeReport& report) {
    nlohmann::json tensors = nlohmann::json::array();
    for (const QuantizedTensor& t : report.tensors)
        tensors.push_back({{"name", t.name},
                           {"ne", t.ne},
                           {"from", ggml_type_name(t.from)},
                           {"type", ggml_type_name(t.to)},
                           {"reason", t.reason},
                           {"bytes", t.bytes}});
    nlohmann::json outputs = nlohmann::json::array();
    for (const auto& path : report.outputs) outputs.push_back(path.string());
    return {{"type", report.type},
            {"file_type", report.file_type},
            {"written", report.written},
            {"outputs", outputs},
            {"input_bytes", report.input_bytes},
            {"output_bytes", report.output_bytes},
            {"notes", report.notes},
            {"tensors", tensors},
            {"seconds", report.seconds}};
}

int run_quantize(QuantizeArgs& args) {
    if (args.split_max_size) args.options.split.max_bytes = parse_split_size(*args.split_max_size);
    const QuantizeReport report = quantize_gguf(args.input, args.output, args.options);
    if (!args.quiet) {
        for (const QuantizedTensor& t : report.tensors)
            std::printf("%-40s %-6s -> %-6s %s\n", t.name.c_str(), ggml_type_name(t.from).c_str(),
                        ggml_type_name(t.to).c_str(), t.reason.c_str());
        for (const std::string& note : report.notes) std::printf("note: %s\n", note.c_str());
        std::printf("%s %s: %zu tensors, %llu -> %llu bytes%s\n",
                    args.options.dry_run ? "would write" : "wrote", report.type.c_str(),
                    report.tensors.size(), static_cast<unsigned long long>(report.input_bytes),
                    static_cast<unsigned long long>(report.output_bytes),
                    report.outputs.size() > 1
                        ? (" in " + std::to_string(report.outputs.size()) + " shards").c_str()
                        : "");
    }
    if (args.json_report) write_json_file(*args.json_report, report_json(report));
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
                    "Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q2_K_S Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M "
                    "Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS F16 BF16 F32 (any case)")
        ->required();
    QuantizeOptions& o = args->options;
    cmd->add_option("--output-tensor-type", o.output_tensor_type, "type of output.weight");
    cmd->add_option("--token-embedding-type", o.token_embedding_type, "type of token_embd.weight");
    cmd->add_option("--tensor-type", o.tensor_types,
                    "PATTERN=TYPE (repeatable; regex searched in the name, lower-cased, first "
                    "match wins)");
    cmd->add_option("--imatrix", o.imatrix,
                    "importance matrix: llama.cpp's GGUF imatrix or a legacy imatrix.dat");
    cmd->add_flag("--pure", o.pure, "every quantized tensor in the file type's own type");
    cmd->add_flag("--leave-output-tensor", o.leave_output_tensor, "keep output.weight as it is");
    cmd->add_flag("--allow-requantize", o.allow_requantize,
                  "requantize already quantized tensors (default: keep them as they are)");
    cmd->add_option("-t,--threads", o.threads, "worker threads (default: all cores)");
    cmd->add_flag("-f,--force", o.force, "replace an existing output file");
    cmd->add_flag("--dry-run", o.dry_run, "show the type of every tensor; write nothing");
    cmd->add_option("--split-max-size", args->split_max_size,
                    "write shards of at most this size (N, NM or NG)");
    cmd->add_option("--json", args->json_report, "write a JSON report to this file");
    cmd->add_flag("-q,--quiet", args->quiet, "no per-tensor lines");
    return {cmd, [args] { return run_quantize(*args); }};
}

}  // namespace rebox::cli
