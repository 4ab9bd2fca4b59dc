// rebox convert: runs the pipeline, prints what was written and the verification verdict,
// writes the --json report; exit 0 done, 2 BLOCKERs (thrown), 3 verification failed.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "format/gguf_shards.hpp"
#include "gguf_tools/modelfile.hpp"
#include "plan_summary.hpp"
#include "progress_line.hpp"
#include "rebox/error.hpp"
#include "rebox/rebox.hpp"
#include "report_json.hpp"

namespace rebox::cli {

int run_convert(const ConvertArgs& args, ConvertOutcome* outcome) {
    ConvertOptions options;
    options.model_dir = args.model_dir;
    options.output = args.output;
    options.plan.outtype = parse_outtype(args.outtype).value_or(OutType::automatic);
    options.plan.tokenizer_pre = args.tokenizer_pre;
    if (args.name) options.plan.name = *args.name;
    if (args.metadata) options.plan.metadata_file = *args.metadata;
    options.plan.allow_lossless_fallback = args.allow_lossless_fallback;
    options.plan.allow_inexact_global_scale = args.allow_inexact_global_scale;
    options.plan.no_mtp = args.no_mtp;
    options.verify = args.verify;
    options.force = args.force;
    options.threads = args.threads;
    if (args.split_max_size) options.split.max_bytes = parse_split_size(*args.split_max_size);
    options.quantize = args.quantize.options();
    if (args.mmproj) options.mmproj = *args.mmproj;
    options.no_mmproj = args.no_mmproj;
    options.fp8_as_q8 = args.fp8_as_q8;

    const auto modelfile = modelfile_path(args.output);
    if (args.modelfile && !args.force && std::filesystem::exists(modelfile))
        throw_input_error(modelfile.string(), "", "already exists; nothing was written",
                          "--force to replace it, or another -o");

    ProgressLine line(!args.quiet);
    options.progress = line.callback();
    const ConvertReport result = convert_model(options);
    line.finish();
    if (outcome) {
        outcome->output_bytes = result.output_bytes;
        outcome->seconds = result.seconds_total;
        if (result.verify && !result.verify->ok())
            outcome->failure_message = "verification failed: " + result.verify->summary();
    }

    if (args.json_report) {
        nlohmann::json report = {
            {"model_dir", args.model_dir},
            {"output", args.output},
            {"files",
             [&] {
                 std::vector<std::string> files;
                 for (const auto& p : result.outputs) files.push_back(p.string());
                 return files;
             }()},
            {"mmproj", result.mmproj.empty() ? nlohmann::json(nullptr)
                                             : nlohmann::json(result.mmproj.string())},
            {"mmproj_bytes", result.mmproj_bytes},
            {"outtype", args.outtype},
            {"written", result.written},
            {"output_bytes", result.output_bytes},
            {"plan", plan_to_json(result.plan)},
            {"seconds",
             {{"total", result.seconds_total},
              {"write", result.seconds_write},
              {"verify", result.seconds_verify}}},
        };
        if (result.quantize) report["quantize"] = quantize_report_to_json(*result.quantize);
        if (result.mmproj_plan) report["mmproj_plan"] = plan_to_json(*result.mmproj_plan);
        if (result.plan.source_bytes > 0)
            report["size_ratio"] = double(result.output_bytes) / double(result.plan.source_bytes);
        report["verification"] = result.verify ? verify_report_to_json(*result.verify)
                                               : nlohmann::json{{"skipped", true}};
        write_json_file(*args.json_report, report);
    }

    if (result.verify && !result.verify->ok()) {
        std::fprintf(stderr, "rebox: %s: verification failed, nothing written: %s\n",
                     args.output.c_str(), result.verify->summary().c_str());
        for (const TensorCheck& t : result.verify->tensors)
            if (!t.identical && t.not_bit_identical.empty())
                std::fprintf(stderr, "MISMATCH %s (%s): %s\n", t.gguf_name.c_str(),
                             t.source_name.c_str(),
                             t.problem.empty() ? "values differ" : t.problem.c_str());
        for (const std::string& p : result.verify->problems)
            std::fprintf(stderr, "PROBLEM %s\n", p.c_str());
        return static_cast<int>(ExitClass::verification);
    }
    if (args.modelfile && result.written) {
        write_modelfile(
            modelfile,
            ollama_modelfile(result.outputs,
                             std::filesystem::path(args.model_dir) / "generation_config.json",
                             result.mmproj),
            args.force);
        if (!args.quiet)
            std::printf(
                "wrote %s (no TEMPLATE: Ollama >= 0.30.0 uses the GGUF's chat template; "
                "older versions need one)\n",
                modelfile.c_str());
    }
    if (!args.quiet) {
        for (const std::string& note : result.plan.notes) std::printf("note: %s\n", note.c_str());
        if (result.quantize)
            for (const std::string& note : result.quantize->notes)
                std::printf("note: %s\n", note.c_str());
        for (const auto& path : result.outputs) std::printf("wrote %s\n", path.c_str());
        if (result.mmproj_plan) {
            for (const std::string& note : result.mmproj_plan->notes)
                std::printf("note: mmproj: %s\n", note.c_str());
            std::printf("wrote %s (%zu tensors (%s), %llu bytes)\n", result.mmproj.c_str(),
                        result.mmproj_plan->tensors.size(),
                        type_counts(*result.mmproj_plan).c_str(),
                        static_cast<unsigned long long>(result.mmproj_bytes));
        }
        std::printf("%zu tensors (%s), %llu bytes in %.2f s\n", result.plan.tensors.size(),
                    result.quantize ? quantized_type_counts(*result.quantize).c_str()
                                    : type_counts(result.plan).c_str(),
                    static_cast<unsigned long long>(result.output_bytes), result.seconds_total);
        if (result.verify)
            std::printf("%s\n", result.verify->summary().c_str());
        else
            std::printf("verification skipped (--no-verify)\n");
    }
    return 0;
}

}  // namespace rebox::cli
