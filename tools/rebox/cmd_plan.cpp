// rebox plan: reads a checkpoint and prints the whole plan without writing anything: per tensor the
// source name, bits/group (or dtype), GGUF name, type, encoding, bytes and why; every BLOCKER with
// its fix (a lossless fallback's price included); the tensor count per GGUF type, the exact GGUF
// file size and its ratio to the input. With --quantize: per tensor the type convert --quantize
// would write and why (llama-quantize's choice). Exit 0 plannable, 2 BLOCKERs.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "plan_summary.hpp"
#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"
#include "rebox/rebox.hpp"
#include "report_json.hpp"

namespace rebox::cli {
namespace {

// "4/64", "4/128 BF16", "4/128 gptq", or the float dtype.
std::string source_kind(const PlannedTensor& t) {
    if (t.bits == 0) return t.source_dtype;
    return std::to_string(t.bits) + "/" + std::to_string(t.group) +
           (t.quant_method.empty() ? "" : " " + t.quant_method) +
           (t.scale_dtype == "F16" ? "" : " " + t.scale_dtype);
}

void print_text(const std::string& model_dir, const PlanReport& plan, const PlanOptions& options) {
    std::printf("plan for %s (%s, %s, --outtype %s): %zu tensors\n", model_dir.c_str(),
                plan.format.c_str(), plan.arch.c_str(), outtype_name(options.outtype),
                plan.tensors.size());
    std::printf("%-44s %-12s %-28s %-5s %-12s %12s  %s\n", "SOURCE", "BITS/GROUP", "GGUF", "TYPE",
                "ENCODING", "BYTES", "WHY");
    for (const PlannedTensor& t : plan.tensors) {
        const bool computed = t.source_name.empty();
        std::printf("%-44s %-12s %-28s %-5s %-12s %12llu  %s\n",
                    computed ? "(config.json)" : t.source_name.c_str(),
                    computed ? "computed" : source_kind(t).c_str(), t.gguf_name.c_str(),
                    ggml_type_name(t.type).c_str(), t.encoding.c_str(),
                    static_cast<unsigned long long>(t.nbytes), t.note.c_str());
    }
    for (const std::string& note : plan.notes) std::printf("NOTE %s\n", note.c_str());
    for (const Blocker& b : plan.blockers)
        std::printf("BLOCKER %s: %s%s\n", b.tensor.c_str(), b.reason.c_str(),
                    b.fix.empty() ? "" : (" (fix: " + b.fix + ")").c_str());
    if (!plan.ok()) {
        std::printf("%zu BLOCKER%s: cannot be carried over exactly; convert would write nothing\n",
                    plan.blockers.size(), plan.blockers.size() == 1 ? "" : "s");
        return;
    }
    std::printf("GGUF: %zu tensors (%s), %llu bytes", plan.tensors.size(),
                type_counts(plan).c_str(), static_cast<unsigned long long>(plan.file_bytes));
    if (plan.source_bytes > 0)
        std::printf(" = %.4f x the packed input (%llu bytes)",
                    double(plan.file_bytes) / double(plan.source_bytes),
                    static_cast<unsigned long long>(plan.source_bytes));
    std::printf("\n");
}

}  // namespace

int run_plan(const PlanArgs& args) {
    PlanOptions options;
    options.outtype = parse_outtype(args.outtype).value_or(OutType::automatic);
    options.tokenizer_pre = args.tokenizer_pre;
    options.allow_lossless_fallback = args.allow_lossless_fallback;
    options.allow_inexact_global_scale = args.allow_inexact_global_scale;
    options.no_mtp = args.no_mtp;
    if (args.name) options.name = *args.name;
    if (args.metadata) options.metadata_file = *args.metadata;
    if (const auto quantize = args.quantize.options()) {
        const QuantizeReport report = plan_quantized_model(args.model_dir, options, *quantize);
        if (args.json) {
            nlohmann::json json = quantize_report_to_json(report);
            json["model_dir"] = args.model_dir;
            json["outtype"] = args.outtype;
            std::printf("%s\n",
                        json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        } else {
            print_quantize_report(report);
        }
        return 0;
    }
    const PlanReport plan = plan_model(args.model_dir, options);
    if (args.json) {
        nlohmann::json report = plan_to_json(plan);
        report["model_dir"] = args.model_dir;
        report["outtype"] = args.outtype;
        report["allow_lossless_fallback"] = args.allow_lossless_fallback;
        std::printf("%s\n",
                    report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
        print_text(args.model_dir, plan, options);
    }
    return plan.ok() ? 0 : static_cast<int>(ExitClass::blocker);
}

}  // namespace rebox::cli
