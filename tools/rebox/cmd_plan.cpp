// rebox plan: reads a checkpoint and prints the whole plan without writing anything: per tensor the
// source name, bits/group (or dtype), GGUF name, type, encoding, bytes and why; every BLOCKER with
// its fix (a lossless fallback's price included); the tensor count per GGUF type, the exact GGUF
// file size and its ratio to the input. Exit 0 plannable, 2 BLOCKERs.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "plan_summary.hpp"
#include "rebox/error.hpp"
#include "rebox/format/ggml_type.hpp"
#include "rebox/plan/plan.hpp"
#include "rebox/source/read_source.hpp"
#include "report_json.hpp"

namespace rebox::cli {
namespace {

std::string source_kind(const SourceTensor& tensor) {
    if (tensor.quant)
        return std::to_string(tensor.quant->bits) + "/" + std::to_string(tensor.quant->group) +
               (tensor.quant->scale_dtype == FloatDtype::F16
                    ? ""
                    : std::string(" ") + float_dtype_name(tensor.quant->scale_dtype));
    if (tensor.int_quant)
        return std::to_string(tensor.int_quant->bits) + "/" +
               std::to_string(tensor.int_quant->group) + " " + tensor.int_quant->method +
               (tensor.int_quant->scale_dtype == FloatDtype::F16
                    ? ""
                    : std::string(" ") + float_dtype_name(tensor.int_quant->scale_dtype));
    return float_dtype_name(tensor.float_dtype);
}

void print_text(const std::string& model_dir, const SourceModel& source, const Plan& plan,
                const PlanOptions& options) {
    std::printf("plan for %s (%s, %s, --outtype %s): %zu tensors\n", model_dir.c_str(),
                source.format.empty() ? "mcq-v1" : source.format.c_str(), plan.arch.c_str(),
                outtype_name(options.outtype), plan.tensors.size());
    std::printf("%-44s %-12s %-28s %-5s %-12s %12s  %s\n", "SOURCE", "BITS/GROUP", "GGUF", "TYPE",
                "ENCODING", "BYTES", "WHY");
    for (const TensorPlan& tp : plan.tensors) {
        const bool computed = tp.is_computed();
        const SourceTensor* st = computed ? nullptr : &source.tensors[tp.source_index];
        std::printf("%-44s %-12s %-28s %-5s %-12s %12llu  %s\n",
                    computed ? "(config.json)" : st->name.c_str(),
                    computed ? "computed" : source_kind(*st).c_str(), tp.gguf_name.c_str(),
                    ggml_type_name(tp.type).c_str(), encoding_name(tp.encoding),
                    static_cast<unsigned long long>(tp.nbytes), tp.note.c_str());
    }
    for (const std::string& note : plan.notes) std::printf("NOTE %s\n", note.c_str());
    for (const Blocker& b : plan.blockers)
        std::printf("BLOCKER %s: %s%s\n", b.tensor.c_str(), b.reason.c_str(),
                    b.fix.empty() ? "" : (" (fix: " + b.fix + ")").c_str());
    if (!plan.blockers.empty()) {
        std::printf("%zu BLOCKER%s: cannot be carried over exactly; convert would write nothing\n",
                    plan.blockers.size(), plan.blockers.size() == 1 ? "" : "s");
        return;
    }
    const uint64_t file_bytes = plan_file_bytes(plan);
    std::printf("GGUF: %zu tensors (%s), %llu bytes", plan.tensors.size(),
                type_counts(plan).c_str(), static_cast<unsigned long long>(file_bytes));
    if (plan.source_bytes > 0)
        std::printf(" = %.4f x the packed input (%llu bytes)",
                    double(file_bytes) / double(plan.source_bytes),
                    static_cast<unsigned long long>(plan.source_bytes));
    std::printf("\n");
}

}  // namespace

int run_plan(const PlanArgs& args) {
    const SourceModel source = read_source_model(args.model_dir);
    PlanOptions options;
    options.outtype = parse_outtype(args.outtype).value_or(OutType::automatic);
    options.tokenizer_pre = args.tokenizer_pre;
    options.allow_lossless_fallback = args.allow_lossless_fallback;
    const Plan plan = make_plan(source, options);
    if (args.json) {
        nlohmann::json report = plan_to_json(plan, &source);
        report["model_dir"] = args.model_dir;
        report["outtype"] = args.outtype;
        report["allow_lossless_fallback"] = args.allow_lossless_fallback;
        std::printf("%s\n",
                    report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
        print_text(args.model_dir, source, plan, options);
    }
    return plan.blockers.empty() ? 0 : static_cast<int>(ExitClass::blocker);
}

}  // namespace rebox::cli
