// The public entry points side by side (include/rebox/rebox.hpp): plan_model, convert_model,
// plan_quantized_model and verify_gguf, each the stages it runs in order; the stages themselves
// live in their folders (source/, plan/, convert/, verify/).
#include <chrono>
#include <utility>

#include "api/plan_report.hpp"
#include "convert/convert.hpp"
#include "convert/convert_quantized.hpp"
#include "format/gguf_shards.hpp"
#include "plan/plan.hpp"
#include "rebox/error.hpp"
#include "rebox/rebox.hpp"
#include "source/read_source.hpp"
#include "verify/verify.hpp"

namespace rebox {

PlanReport plan_model(const std::filesystem::path& model_dir, const PlanOptions& options) {
    const SourceModel source = read_source_model(model_dir);
    return make_plan_report(make_plan(source, options), &source);
}

ConvertReport convert_model(const ConvertOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    SourceModel source = read_source_model(options.model_dir);
    Plan plan = make_plan(source, options.plan);
    // make_plan already carries the source's blockers: adding them again listed each one twice.
    if (!plan.blockers.empty()) throw Error(options.model_dir.string(), plan.blockers);
    ConvertReport result = convert_detail::write_conversion(options, source, plan, start);
    result.plan = make_plan_report(std::move(plan), &source);
    return result;
}

QuantizeReport plan_quantized_model(const std::filesystem::path& model_dir,
                                    const PlanOptions& plan_options,
                                    const QuantizeOptions& quantize) {
    SourceModel source = read_source_model(model_dir);
    Plan plan = make_plan(source, plan_options);
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
