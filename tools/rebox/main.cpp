// rebox command line: argument parsing, the top-level greeting (command list, --version) and the
// mapping of rebox::Error to exit codes (1 usage/IO/malformed input, 2 BLOCKER, 3 verification
// failed, 4 batch: an index past the manifest's last line, 70 internal error: any other exception,
// 130 cancelled).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "convert_options.hpp"
#include "gguf_tool_commands.hpp"
#include "rebox/error.hpp"
#include "rebox/version.hpp"
#include "signal_cleanup.hpp"

namespace {

// The top-level help: one line per command, taken from the subcommands' own descriptions.
void print_command_list(std::FILE* out, CLI::App& app) {
    std::fprintf(
        out, "rebox %s: move low-bit quantized checkpoints into GGUF without changing a value\n\n",
        rebox::version());
    std::fprintf(out,
                 "Usage: rebox COMMAND ARGS...   (rebox COMMAND --help shows its arguments)\n\n");
    std::fprintf(out, "Commands:\n");
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        std::fprintf(out, "  %-8s %s\n", sub->get_name().c_str(), sub->get_description().c_str());
    std::fprintf(out, "\nOptions:\n  -h, --help  this list\n  --version   print the version\n");
    std::fprintf(out,
                 "\nExit codes: 0 ok, 1 bad input or usage, 2 BLOCKER (nothing written), "
                 "3 verification failed, 4 batch: no such manifest line, 70 internal error\n");
}

}  // namespace

int main(int argc, char** argv) {
    using namespace rebox::cli;
    CLI::App app{"rebox: move low-bit quantized checkpoints into GGUF without changing a value"};
    app.require_subcommand(1);

    ConvertArgs convert;
    auto* convert_cmd = app.add_subcommand(
        "convert",
        "Write a checkpoint as GGUF, exactly, and verify it: mcq-v1, MLX, GPTQ, AWQ, "
        "compressed-tensors, compressed-tensors FP4, ModelOpt NVFP4, gpt-oss MXFP4 or float");
    convert_cmd->add_option("MODEL_DIR", convert.model_dir, "model directory")->required();
    convert_cmd->add_option("-o,--output", convert.output, "output .gguf")->required();
    convert_cmd->add_flag("-f,--force", convert.force, "replace an existing output file");
    convert_cmd->add_flag("-q,--quiet", convert.quiet, "no progress line");
    convert_cmd->add_option("--json", convert.json_report, "write a JSON report to this file");
    bool no_verify = false;
    add_model_convert_options(*convert_cmd, convert, no_verify);
    convert_cmd->add_option("--mmproj", convert.mmproj,
                            "where to write the vision tower's mmproj file (default: "
                            "mmproj-NAME.gguf beside -o NAME.gguf)");
    convert_cmd->add_flag("--modelfile", convert.modelfile,
                          "also write OUT.Modelfile for `ollama create` (FROM each output file, "
                          "stop tokens, generation_config.json sampling defaults)");

    PlanArgs plan;
    auto* plan_cmd = app.add_subcommand(
        "plan", "Show what convert would write (types, sizes, BLOCKERs) without writing");
    plan_cmd->add_option("MODEL_DIR", plan.model_dir, "model directory")->required();
    plan_cmd->add_flag("--json", plan.json, "print one JSON object");
    plan_cmd->add_option("--outtype", plan.outtype, kOuttypeHelp)->check(outtype_validator());
    plan_cmd->add_flag("--allow-lossless-fallback", plan.allow_lossless_fallback, kFallbackHelp);
    plan_cmd->add_flag("--allow-inexact-global-scale", plan.allow_inexact_global_scale,
                       kInexactGlobalScaleHelp);
    plan_cmd->add_flag("--no-mtp,--no-nextn", plan.no_mtp, kNoMtpHelp);
    plan_cmd->add_option("--tokenizer-pre", plan.tokenizer_pre,
                         "tokenizer.ggml.pre to use when the pre-tokenizer regex is unknown");
    add_quantize_recipe_options(*plan_cmd, plan.quantize,
                                "show each tensor's type as convert --quantize would write it");
    plan_cmd->add_option("--name", plan.name, kNameHelp);
    plan_cmd->add_option("--metadata", plan.metadata, kMetadataHelp);

    VerifyArgs verify;
    auto* verify_cmd =
        app.add_subcommand("verify", "Prove a GGUF holds exactly the values of its source");
    verify_cmd->add_option("MODEL_DIR", verify.model_dir, "source model directory")->required();
    verify_cmd->add_option("GGUF", verify.gguf, "GGUF file to check")->required();
    verify_cmd->add_option("-t,--threads", verify.threads, "worker threads (default: all cores)");
    verify_cmd->add_option("--json", verify.json_report, "write a JSON report to this file");
    verify_cmd->add_flag("--full", verify.full,
                         "re-quantize every block of a lossy tensor (default: a sample)");
    verify_cmd->add_option("--imatrix", verify.imatrix,
                           "the importance matrix the file was quantized with (GGUF or "
                           "imatrix.dat)");
    verify_cmd->add_option("--mmproj", verify.mmproj,
                           "the vision tower's mmproj file to check too (default: "
                           "mmproj-NAME.gguf beside NAME.gguf, when it exists)");
    verify_cmd->add_flag("--no-mtp,--no-nextn", verify.no_mtp,
                         "the file was converted with --no-mtp: the checkpoint's MTP layers are "
                         "not expected in it");
    verify_cmd->add_option("--tokenizer-pre", verify.tokenizer_pre,
                           "the pre-tokenizer name the file was converted with (default: derived "
                           "from tokenizer.json)");

    InspectArgs inspect;
    auto* inspect_cmd =
        app.add_subcommand("inspect", "Show a .gguf or .safetensors file: header, KVs, tensors");
    inspect_cmd->add_option("FILE", inspect.file, "file to inspect")->required();
    inspect_cmd->add_flag("--json", inspect.json, "print one JSON object");
    inspect_cmd->add_flag("--header", inspect.header,
                          "explain the first 24 bytes of a GGUF as annotated hex");

    SplitArgs split;
    auto* split_cmd = app.add_subcommand("split", "Split a GGUF into shards that llama.cpp loads");
    split_cmd->add_option("IN", split.input, "input .gguf")->required();
    split_cmd
        ->add_option("OUT_PREFIX", split.out_prefix, "shards are OUT_PREFIX-0000i-of-0000N.gguf")
        ->required();
    auto* size_opt = split_cmd->add_option("--split-max-size", split.max_size,
                                           "max tensor bytes per shard (N, NM, NG)");
    auto* count_opt =
        split_cmd->add_option("--split-max-tensors", split.max_tensors, "max tensors per shard");
    size_opt->excludes(count_opt);
    split_cmd->add_flag("--no-tensor-first-split", split.no_tensor_first_split,
                        "first shard holds metadata only");
    split_cmd->add_flag("-f,--force", split.force, "replace existing shard files");
    split_cmd->add_flag("--dry-run", split.dry_run,
                        "print the shards it would write; write nothing");

    MergeArgs merge;
    auto* merge_cmd = app.add_subcommand("merge", "Merge a split GGUF set into one file");
    merge_cmd->add_option("FIRST", merge.first_shard, "first shard (...-00001-of-0000N.gguf)")
        ->required();
    merge_cmd->add_option("OUT", merge.output, "output .gguf")->required();
    merge_cmd->add_flag("-f,--force", merge.force, "replace an existing output file");
    merge_cmd->add_flag("--dry-run", merge.dry_run, "print what it would write; write nothing");
    merge_cmd->allow_extras();  // run_merge explains the argument order instead

    BatchArgs batch;
    auto* batch_cmd = app.add_subcommand(
        "batch",
        "Convert line INDEX of a TSV manifest (a Kubernetes/Slurm array task), or summarize");
    batch_cmd
        ->add_option("MANIFEST", batch.manifest,
                     "TSV: optional '#' header, then SOURCE_DIR<TAB>NAME[<TAB>OPTIONS] a line")
        ->required();
    auto* out_opt = batch_cmd->add_option("--out", batch.out_dir,
                                          "write DIR/NAME.gguf and the report DIR/NAME.json");
    auto* summary_opt = batch_cmd->add_option("--summary", batch.summary_dir,
                                              "print verdict, bytes, seconds per model of DIR");
    out_opt->excludes(summary_opt);
    batch_cmd
        ->add_option("--index", batch.index,
                     "manifest line, 0-based after the header (default: "
                     "$JOB_COMPLETION_INDEX, else $SLURM_ARRAY_TASK_ID)")
        ->excludes(summary_opt);

    const ToolCommand gguf_tools[] = {add_meta_command(app), add_diff_command(app),
                                      add_hash_command(app), add_quantize_command(app),
                                      add_check_command(app)};

    // The greeting. `rebox --help` is a request: the list on stdout, exit 0. A bare `rebox` is a
    // usage error (no command to run): the same list on stderr, exit 1, as git and tar do, so that
    // a script that lost its arguments fails instead of passing silently.
    if (argc == 1) {
        print_command_list(stderr, app);
        return 1;
    }
    if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        print_command_list(stdout, app);
        return 0;
    }
    if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
        std::printf("rebox %s\n", rebox::version());
        return 0;
    }

    // CLI11 2.1 answers an unknown word with only "A subcommand is required": name it instead.
    if (argc >= 2 && argv[1][0] != '-') {
        std::string names;
        bool known = false;
        for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
            known = known || sub->get_name() == argv[1];
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
        if (!known) {
            std::fprintf(stderr, "rebox: unknown command '%s' (expected one of %s; see --help)\n",
                         argv[1], names.c_str());
            return 1;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 1;
    }
    // Every writing command leaves no temporary and no half-renamed set behind on a signal.
    install_signal_cleanup();
    try {
        if (inspect_cmd->parsed()) return run_inspect(inspect);
        if (convert_cmd->parsed()) {
            convert.verify = !no_verify;
            return run_convert(convert);
        }
        if (plan_cmd->parsed()) return run_plan(plan);
        if (batch_cmd->parsed()) return run_batch(batch);
        if (verify_cmd->parsed()) return run_verify(verify);
        if (split_cmd->parsed()) return run_split(split);
        if (merge_cmd->parsed()) {
            merge.extra = merge_cmd->remaining();
            return run_merge(merge);
        }
        for (const ToolCommand& tool : gguf_tools)
            if (tool.command->parsed()) return tool.run();
    } catch (const rebox::Error& e) {
        std::fprintf(stderr, "rebox: %s\n", e.what());
        return e.exit_code();
    } catch (const std::exception& e) {
        // Not a rebox::Error (std::bad_alloc included): a broken invariant, exit 70 as documented.
        std::fprintf(stderr, "rebox: internal error: %s\n", e.what());
        return 70;
    } catch (...) {
        std::fprintf(stderr, "rebox: internal error: an exception that is not a std::exception\n");
        return 70;
    }
    return 1;
}
