// The exactness rules per tensor. Quantized, --outtype q4_1: Q4_1 (bits <= 4) or, opt-in with
// --allow-lossless-fallback as the spec demands of wider types, Q5_1 (bits 5) iff
// group % 32 == 0, cols % 32 == 0 and every group's scale/min is exact in fp16 (a scale only where
// the group has a non-zero code); else, with --allow-lossless-fallback, F16 when every value is
// exact in fp16, otherwise F32; without it every failed condition is its own Blocker.
// --outtype f32: exact binary32 values. Float sources: 1-D and *norm.weight -> F32 (norms stay F32,
// notes/gguf.md §3.2), other tensors keep their dtype (or F32 with --outtype f32).
#include "tensor_rules.hpp"

#include <algorithm>

#include "quant_checks.hpp"
#include "rebox/format/ggml_type.hpp"

namespace rebox::plan_detail {
namespace {

constexpr int64_t kBlock = 32;  // QK4_1 = QK5_1 = 32

std::vector<int64_t> reversed(const std::vector<int64_t>& shape) {
    return std::vector<int64_t>(shape.rbegin(), shape.rend());
}

constexpr const char* kFallbackFix = "--allow-lossless-fallback (exact F16/F32 copy)";

// Why the tensor cannot become Q4_1/Q5_1 blocks (each reason with its fix); empty when it can.
struct BlockRefusal {
    std::string reason;
    std::string fix;
};

std::vector<BlockRefusal> block_refusals(const QuantView& q, int64_t cols, bool allow_wider) {
    std::vector<BlockRefusal> refusals;
    // spec/mcq-v1.md: any type wider than the Q4_1 target (Q5_1 for 5-bit codes included) is opt-in.
    if (q.bits == 5 && !allow_wider)
        refusals.push_back({"bits 5: the codes do not fit a Q4_1 nibble; Q5_1 holds them exactly but is "
                            "a wider type, which the mcq-v1 contract makes opt-in",
                            "use --allow-lossless-fallback (exact Q5_1 blocks)"});
    if (q.bits > 5)
        refusals.push_back({"bits " + std::to_string(q.bits) +
                                ": the codes do not fit a Q4_1 nibble or a Q5_1 code (expected "
                                "<= 5); no GGUF block type holds them exactly",
                            std::string("use ") + kFallbackFix + ", or --outtype f32"});
    if (q.group % kBlock != 0)
        refusals.push_back(
            {"group " + std::to_string(q.group) +
                 " is not a multiple of 32: a Q4_1/Q5_1 block would span two groups",
             std::string("re-export with group a multiple of 32, or use ") + kFallbackFix});
    if (cols % kBlock != 0)
        refusals.push_back(
            {"cols " + std::to_string(cols) +
                 " is not a multiple of 32: GGUF rows must be whole Q4_1/Q5_1 blocks",
             std::string("use ") + kFallbackFix + ", or --outtype f32"});
    return refusals;
}

std::string joined_reasons(const std::vector<BlockRefusal>& refusals) {
    std::string text;
    for (const BlockRefusal& r : refusals) text += (text.empty() ? "" : "; ") + r.reason;
    return text;
}

bool plan_quantized(const SourceTensor& source, const PlanOptions& options, TensorPlan* plan,
                    std::vector<Blocker>* blockers) {
    const QuantView& q = *source.quant;
    const int64_t cols = source.shape.at(1);
    const uint64_t n_values = source.element_count();
    plan->ne = reversed(source.shape);
    if (options.outtype == OutType::f32) {
        plan->type = static_cast<uint32_t>(GgmlType::F32);
        plan->encoding = Encoding::dequant_f32;
        plan->note = "--outtype f32: binary32 values";
        return true;
    }
    std::vector<BlockRefusal> refusals = block_refusals(q, cols, options.allow_lossless_fallback);
    BlockScaleCheck scales;
    if (refusals.empty()) {
        scales = check_block_scales(q, n_values);
        if (scales.problem)
            refusals.push_back(
                {*scales.problem,
                 std::string("re-export with fp16 scales and mins, or use ") + kFallbackFix});
    }
    if (refusals.empty()) {
        const bool q5 = q.bits == 5;
        plan->type = static_cast<uint32_t>(q5 ? GgmlType::Q5_1 : GgmlType::Q4_1);
        plan->encoding = q5 ? Encoding::q5_1_repack : Encoding::q4_1_repack;
        plan->note = std::to_string(q.bits) + "-bit codes -> " + (q5 ? "Q5_1" : "Q4_1") +
                     " blocks, scale/min as fp16 d/m";
        if (q.scale_dtype != FloatDtype::F16)
            plan->note +=
                std::string(" (") + float_dtype_name(q.scale_dtype) + " scales/mins exact in fp16)";
        if (scales.zero_scale_groups > 0) {
            plan->zero_code_groups_get_zero_scale = true;
            plan->note += "; " + std::to_string(scales.zero_scale_groups) +
                          " group(s) with all codes 0 and a scale not exact in fp16 get d = 0";
        }
        return true;
    }
    if (!options.allow_lossless_fallback) {
        for (BlockRefusal& r : refusals)
            blockers->push_back(Blocker{source.name, std::move(r.reason), std::move(r.fix)});
        return false;
    }
    const bool f16 = values_fit_f16(q, n_values);
    plan->type = static_cast<uint32_t>(f16 ? GgmlType::F16 : GgmlType::F32);
    plan->encoding = f16 ? Encoding::dequant_f16 : Encoding::dequant_f32;
    plan->note =
        "fallback (" + joined_reasons(refusals) + ") -> " +
        (f16 ? "F16: every value is exact in fp16" : "F32: some value is not exact in fp16");
    return true;
}

bool plan_float(const SourceTensor& source, const std::string& gguf_name, OutType outtype,
                TensorPlan* plan, std::vector<Blocker>* blockers) {
    if (source.shape.empty() || source.shape.size() > 4) {
        blockers->push_back(Blocker{source.name,
                                    "a " + std::to_string(source.shape.size()) +
                                        "-D tensor cannot be a GGUF tensor (expected 1 to 4 dims)",
                                    "reshape or remove the tensor"});
        return false;
    }
    plan->ne = reversed(source.shape);
    const bool keep_f32 =
        source.shape.size() == 1 || gguf_name.ends_with("norm.weight") || outtype == OutType::f32;
    const std::string dtype = float_dtype_name(source.float_dtype);
    if (keep_f32 || source.float_dtype == FloatDtype::F32) {
        plan->type = static_cast<uint32_t>(GgmlType::F32);
        plan->encoding =
            source.float_dtype == FloatDtype::F32 ? Encoding::copy_f32 : Encoding::widen_f32;
        plan->note = source.float_dtype == FloatDtype::F32
                         ? "F32 copied"
                         : dtype + " widened to F32 exactly" +
                               (outtype == OutType::f32 ? " (--outtype f32)" : " (norms stay F32)");
    } else if (source.float_dtype == FloatDtype::F16) {
        plan->type = static_cast<uint32_t>(GgmlType::F16);
        plan->encoding = Encoding::copy_f16;
        plan->note = "F16 copied";
    } else {
        plan->type = static_cast<uint32_t>(GgmlType::BF16);
        plan->encoding = Encoding::copy_bf16;
        plan->note = "BF16 copied";
    }
    return true;
}

}  // namespace

bool plan_tensor(const SourceTensor& source, size_t source_index, const std::string& gguf_name,
                 const PlanOptions& options, TensorPlan* plan, std::vector<Blocker>* blockers) {
    plan->source_index = source_index;
    plan->gguf_name = gguf_name;
    const bool ok = source.is_quantized()
                        ? plan_quantized(source, options, plan, blockers)
                        : plan_float(source, gguf_name, options.outtype, plan, blockers);
    if (!ok) return false;
    const auto nbytes = ggml_nbytes(plan->type, plan->ne);
    if (!nbytes) {
        blockers->push_back(
            Blocker{source.name,
                    "no valid GGUF size for " + ggml_type_name(plan->type) + " with this shape",
                    "check the tensor's shape"});
        return false;
    }
    plan->nbytes = *nbytes;
    return true;
}

}  // namespace rebox::plan_detail
