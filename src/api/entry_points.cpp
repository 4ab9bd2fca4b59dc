// The public entry points side by side (include/rebox/rebox.hpp): plan_model, convert_model,
// plan_quantized_model and verify_gguf, each the stages it runs in order; the stages themselves
// live in their folders (source/, plan/, convert/, verify/).
#include <chrono>
#include <optional>
#include <set>
#include <utility>

#include "api/plan_report.hpp"
#include "convert/convert.hpp"
#include "convert/convert_quantized.hpp"
#include "format/gguf_shards.hpp"
#include "plan/fp8_as_q8.hpp"
#include "plan/fp8_rules.hpp"
#include "plan/mmproj_plan.hpp"
#include "plan/plan.hpp"
#include "rebox/error.hpp"
#include "rebox/rebox.hpp"
#include "source/read_source.hpp"
#include "verify/verify.hpp"

namespace rebox {
namespace {

// The vision tower's plan when convert writes one: none with --no-mmproj (the text plan's note
// says what is left out) or without a tower rebox converts (an input error when --mmproj asked
// for it); its BLOCKERs stop the whole conversion, so neither file is written.
std::optional<Plan> plan_mmproj(const ConvertOptions& options, const SourceModel& source,
                                Plan& text_plan) {
    if (options.no_mmproj) {
        if (options.mmproj)
            throw_input_error("", "--mmproj", "and --no-mmproj contradict each other");
        return std::nullopt;
    }
    std::optional<Plan> mmproj = make_mmproj_plan(source, options.plan);
    if (!mmproj) {
        if (options.mmproj)
            throw_input_error(options.model_dir.string(), "--mmproj",
                              "the checkpoint has no vision tower rebox converts to an mmproj "
                              "file; leave out --mmproj");
        return std::nullopt;
    }
    // convert --quantize: the projector is written exactly, as llama-quantize leaves the
    // converter's mmproj file (`rebox quantize` quantizes one on request).
    if (!mmproj->blockers.empty()) throw Error(options.model_dir.string(), mmproj->blockers);
    // The text plan's note about the left-out tower now says where it went (all of it, or the
    // part the mmproj takes: Gemma 4's audio tower is left out of both, with the mmproj's note).
    std::set<size_t> taken;
    for (const TensorPlan& tp : mmproj->tensors) taken.insert(tp.source_index);
    for (std::string& note : text_plan.notes)
        if (const size_t at = note.find(" vision tower / multimodal projector tensor(s) left out");
            at != std::string::npos) {
            const std::string count = note.substr(0, at);
            note = std::to_string(taken.size()) == count
                       ? count +
                             " vision tower / multimodal projector tensor(s) written to the mmproj "
                             "file, beside the text model"
                       : count + " multimodal tensor(s) left out of the text model, " +
                             std::to_string(taken.size()) +
                             " of them written to the mmproj file beside it";
        }
    return mmproj;
}

}  // namespace

PlanReport plan_model(const std::filesystem::path& model_dir, const PlanOptions& options) {
    const SourceModel source = read_source_model(model_dir);
    return make_plan_report(make_plan(source, options), &source);
}

ConvertReport convert_model(const ConvertOptions& requested) {
    const auto start = std::chrono::steady_clock::now();
    SourceModel source = read_source_model(requested.model_dir);
    ConvertOptions options = requested;
    PlanOptions plan_options = options.plan;
    const std::optional<GgmlType> fp8_outtype =
        plan_detail::fp8_converter_outtype(source, plan_options.outtype);
    if (options.fp8_as_q8) {  // the converter's --fp8-as-q8: binary32 products, then Q8_0
        if (options.quantize)
            throw_input_error("--fp8-as-q8", "", "is not taken with --quantize",
                              "one of them: --fp8-as-q8 writes FP8 tensors as Q8_0, --quantize "
                              "quantizes the whole file");
        if (!fp8_outtype)
            throw_input_error(options.model_dir.string(), "", "has no FP8 tensor for --fp8-as-q8",
                              "an FP8 checkpoint, or a conversion without --fp8-as-q8");
        plan_options.fp8_rounded_to = GgmlType::F32;
    } else if (options.quantize) {  // FP8: the converter's rounding, then llama-quantize
        plan_options.fp8_rounded_to = fp8_outtype;
    }
    Plan plan = make_plan(source, plan_options);
    // make_plan already carries the source's blockers: adding them again listed each one twice.
    if (!plan.blockers.empty()) throw Error(options.model_dir.string(), plan.blockers);
    if (options.fp8_as_q8) {  // the rest as the converter's output type (llama-quantize to it)
        options.quantize.emplace();
        options.quantize->type = std::string(ggml_type_name(*fp8_outtype));
    }
    std::optional<Plan> mmproj = plan_mmproj(options, source, plan);
    const std::filesystem::path mmproj_path = !mmproj          ? std::filesystem::path()
                                              : options.mmproj ? *options.mmproj
                                                               : mmproj_path_beside(options.output);
    ConvertReport result = convert_detail::write_conversion(
        options, source, plan, start, mmproj ? &*mmproj : nullptr, mmproj_path);
    result.plan = make_plan_report(std::move(plan), &source);
    if (mmproj) result.mmproj_plan = make_plan_report(std::move(*mmproj), &source);
    return result;
}

QuantizeReport plan_quantized_model(const std::filesystem::path& model_dir,
                                    const PlanOptions& plan_options,
                                    const QuantizeOptions& quantize) {
    SourceModel source = read_source_model(model_dir);
    PlanOptions lossy = plan_options;
    lossy.fp8_rounded_to = plan_detail::fp8_converter_outtype(source, plan_options.outtype);
    Plan plan = make_plan(source, lossy);
    if (!plan.blockers.empty()) throw Error(model_dir.string(), plan.blockers);
    QuantizeOptions options = quantize;
    options.dry_run = true;
    return convert_detail::quantize_report(plan,
                                           convert_detail::choose_for_plan(plan, source, options));
}

VerifyReport verify_gguf(const std::filesystem::path& model_dir, const std::filesystem::path& gguf,
                         const VerifyOptions& options) {
    return verify_gguf_set(model_dir, GgufSet::open(gguf), options);
}

}  // namespace rebox
