// The per-tensor factor of NVFP4 checkpoints from ModelOpt (weight_scale_2) and compressed-tensors
// (1/weight_global_scale): written as llama.cpp's F32 `<tensor>.scale` ([1], or [n_expert] for
// stacked experts), which the graph multiplies in after the matmul, only where the architecture's
// graph (llama.cpp src/models/*.cpp) passes that scale on. A factor other than 1 on any other
// tensor is a BLOCKER: llama.cpp would load the .scale and silently ignore it. A factor of exactly
// 1 is left out (as llama.cpp's converter skips trivial scales).
#include "plan/global_scale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string_view>

#include "arch/architecture.hpp"
#include "rebox/ggml_type.hpp"
#include "source/source_values.hpp"

namespace rebox::plan_detail {
namespace {

// "blk.3.attn_q.weight" -> "attn_q", "output.weight" -> "output"; "" when not a weight.
std::string role_of(const std::string& gguf_name) {
    if (!gguf_name.ends_with(".weight")) return "";
    std::string stem = gguf_name.substr(0, gguf_name.size() - 7);
    if (stem.starts_with("blk.")) {
        const size_t dot = stem.find('.', 4);
        if (dot == std::string::npos) return "";
        stem = stem.substr(dot + 1);
    }
    return stem;
}

std::string float_text(double value) {
    char text[48];
    std::snprintf(text, sizeof text, "%.9g", value);
    return text;
}

// The architecture's per-expert factor folded into a stacked ffn_down_exps' NVFP4 factors
// (Architecture::nvfp4_down_exps_factor): the plan of `stem`.scale planned from that source (its
// index in plan.tensors), whose values multiply each expert's factor as the converter does, one
// F32 product each (s * r[e] of two F32 tensors: one rounding). A product that is not the exact
// one is marked inexact like fl32(1/g): `error` the largest relative distance. None: nullopt.
std::optional<size_t> fold_expert_factor(const SourceModel& source, const Plan& plan,
                                         std::string_view factor, const std::string& stem,
                                         std::vector<float>& factors, bool& inexact,
                                         double& worst) {
    if (factor.empty() || !stem.ends_with(".ffn_down_exps")) return std::nullopt;
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const TensorPlan& t = plan.tensors[i];
        if (t.is_computed() || t.gguf_name != stem + ".scale") continue;
        const SourceTensor& r = source.tensors[t.source_index];
        if (!r.name.ends_with("." + std::string(factor)) || r.element_count() != factors.size())
            continue;
        std::vector<float> values(factors.size());
        source_values_f32(r, 0, values.size(), values.data());
        for (size_t e = 0; e < factors.size(); ++e) {
            const float product = factors[e] * values[e];
            // Both are floats: their double product is exact (at most 48 significant bits).
            const double exact = static_cast<double>(factors[e]) * values[e];
            if (static_cast<double>(product) != exact) {
                inexact = true;
                worst = std::max(worst, std::fabs(product - exact) / std::fabs(exact));
            }
            factors[e] = product;
        }
        return i;
    }
    return std::nullopt;
}

}  // namespace

void plan_global_scales(const SourceModel& source, const PlanOptions& options, Plan& plan) {
    std::set<std::string> names;
    for (const TensorPlan& t : plan.tensors) names.insert(t.gguf_name);
    std::vector<TensorPlan> added;
    std::vector<size_t> folded;  // the factor tensors folded into the experts' factors
    const arch::Architecture* architecture = arch::find_architecture(plan.arch);
    const std::string_view expert_factor =
        architecture ? architecture->nvfp4_down_exps_factor : std::string_view{};
    for (const TensorPlan& t : plan.tensors) {
        if (t.is_computed()) continue;
        std::vector<size_t> sources = t.expert_sources;
        if (sources.empty()) sources.push_back(t.source_index);
        std::vector<float> factors;
        bool any = false, all_one = true, inexact = false;
        double worst = 0;
        for (const size_t i : sources) {
            const SourceTensor& st = source.tensors[i];
            const float f = st.fp4 && st.fp4->scale2 ? *st.fp4->scale2 : 1.0f;
            any |= st.fp4 && st.fp4->scale2;
            all_one &= f == 1.0f;
            if (st.fp4 && st.fp4->scale2_inexact) {
                inexact = true;
                worst = std::max(worst, st.fp4->scale2_error);
            }
            factors.push_back(f);
        }
        if (!any) continue;
        const bool inexact_before = inexact;
        const std::optional<size_t> fold = fold_expert_factor(
            source, plan, expert_factor, t.gguf_name.substr(0, t.gguf_name.size() - 7), factors,
            inexact, worst);
        if (fold) {
            folded.push_back(*fold);
            all_one = std::all_of(factors.begin(), factors.end(), [](float f) { return f == 1; });
        }
        if (all_one) continue;
        const SourceTensor& first = source.tensors[sources.front()];
        const std::string role = role_of(t.gguf_name);
        const std::string scale_name = t.gguf_name.substr(0, t.gguf_name.size() - 7) + ".scale";
        std::string what = std::string(first.fp4->origin) + " per-tensor factor " +
                           (first.fp4->origin == std::string("ModelOpt") ? "weight_scale_2"
                                                                         : "1/weight_global_scale");
        if (fold) what += " times " + std::string(expert_factor);
        // What GGUF holds instead of the exact factor, for the messages.
        const std::string held =
            fold && !inexact_before ? "fl32(weight_scale_2 * " + std::string(expert_factor) + "[e])"
                                    : "fl32(1/global_scale)";
        if (architecture == nullptr || !arch::graph_applies_nvfp4_scale(*architecture, role)) {
            plan.blockers.push_back(
                Blocker{first.name,
                        what + " = " + float_text(factors.front()) + " is not 1, and llama.cpp's " +
                            plan.arch + " graph ignores " + scale_name +
                            " (it would silently compute a different model)",
                        "keep this module unquantized or quantized with a factor of 1 (exclude it "
                        "from NVFP4), or use an architecture whose graph applies it"});
            continue;
        }
        const std::string stem = t.gguf_name.substr(0, t.gguf_name.size() - 7);
        if (role == "output" && t.type != GgmlType::NVFP4) {
            plan.blockers.push_back(Blocker{
                first.name,
                what + " = " + float_text(factors.front()) + " on an output.weight planned as " +
                    ggml_type_name(t.type) +
                    ": llama.cpp loads output.scale only beside an NVFP4 output.weight",
                "convert without --outtype / --allow-lossless-fallback for this tensor (its rows "
                "must be whole NVFP4 blocks)"});
            continue;
        }
        if ((role == "ffn_gate" || role == "ffn_up" || role == "ffn_down") &&
            names.count(stem + ".bias")) {
            plan.blockers.push_back(Blocker{
                first.name,
                what + " = " + float_text(factors.front()) + " on a dense FFN with a bias: " +
                    "llama.cpp's build_ffn adds the bias before multiplying " + scale_name,
                "export the checkpoint without NVFP4 on this FFN"});
            continue;
        }
        if (inexact && !options.allow_inexact_global_scale) {
            plan.blockers.push_back(Blocker{
                first.name,
                "GGUF can hold only " + held + " = " + float_text(factors.front()) + " as " +
                    scale_name + ", off by " + float_text(worst) +
                    " relative: every value would differ from E2M1 * s * " +
                    (held.starts_with("fl32(1/") ? "(1/g)" : "the exact factor"),
                "pass --allow-inexact-global-scale to accept it (the tensor is then reported "
                "not bit-identical)"});
            continue;
        }
        TensorPlan scale;
        scale.source_index = TensorPlan::kComputed;
        scale.gguf_name = scale_name;
        scale.type = GgmlType::F32;
        scale.computed = factors;
        scale.ne = {static_cast<int64_t>(factors.size())};
        scale.nbytes = 4 * factors.size();
        scale.encoding = Encoding::copy_f32;
        scale.note =
            inexact ? held + " of " + first.name + ": NOT bit-identical (off by up to " +
                          float_text(worst) + " relative; --allow-inexact-global-scale)"
                    : what + " of " + first.name + (fold ? ", one F32 product each" : ", verbatim");
        if (inexact)
            plan.notes.push_back(scale_name + ": not bit-identical (" + held + ", off by " +
                                 float_text(worst) + " relative; --allow-inexact-global-scale)");
        added.push_back(std::move(scale));
    }
    // A folded factor is no tensor of its own (the converter pops it).
    std::sort(folded.begin(), folded.end());
    for (auto it = folded.rbegin(); it != folded.rend(); ++it)
        plan.tensors.erase(plan.tensors.begin() + static_cast<std::ptrdiff_t>(*it));
    for (TensorPlan& t : added) plan.tensors.push_back(std::move(t));
}

}  // namespace rebox::plan_detail
