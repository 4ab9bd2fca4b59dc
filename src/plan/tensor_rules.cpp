// The exactness rules per tensor (the output type policy). Quantized tensors:
// - --outtype auto (default): Q4_1 for bits <= 4, Q5_1 for bits 5, iff group % 32 == 0,
//   cols % 32 == 0 and every group's scale/min is exact in fp16 (a scale only where the group has a
//   non-zero code). --outtype q4_1: the same with Q4_1 as the only block type (5-bit codes
//   refused). What no allowed block type holds is a Blocker per failed condition, saying how many
//   bytes the exact fallback would add; with --allow-lossless-fallback it becomes F16 when every
//   value is exact in fp16, otherwise F32.
// - integer-zero-point sources (GPTQ, AWQ, compressed-tensors): the smallest of Q4_0 < Q4_1 < Q5_0
//   < Q5_1 < Q8_0 that holds every (q - z) * s exactly (int_quant_rules.cpp); refusals as above.
// - FP8 block-quantized sources: an F16/BF16/F32 copy, the smallest exact one (fp8_rules.cpp).
// - --outtype f32: exact binary32 values; f16 / bf16: only when every value is exact in that type,
//   else a Blocker naming the first inexact value.
// Float tensors: 1-D and *norm.weight -> F32 always (llama.cpp keeps them F32, docs/gguf.md §3.2);
// others keep their dtype, or become the --outtype f32/f16/bf16 type when every value is exact.
#include "tensor_rules.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>

#include "fp8_rules.hpp"
#include "int_quant_rules.hpp"
#include "quant_checks.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox::plan_detail {
namespace {

constexpr int64_t kBlock = 32;  // QK4_1 = QK5_1 = 32

std::vector<int64_t> reversed(const std::vector<int64_t>& shape) {
    return std::vector<int64_t>(shape.rbegin(), shape.rend());
}

constexpr const char* kFallbackFix = "--allow-lossless-fallback (exact F16/F32 copy)";

// Why the tensor cannot become blocks of the allowed types (each reason with its fix); empty when
// it can.
struct BlockRefusal {
    std::string reason;
    std::string fix;
};

std::vector<BlockRefusal> block_refusals(const QuantView& q, int64_t cols, OutType outtype) {
    std::vector<BlockRefusal> refusals;
    if (q.bits == 5 && outtype == OutType::q4_1)
        refusals.push_back(
            {"bits 5: the codes do not fit a Q4_1 nibble and --outtype q4_1 allows "
             "no other block type",
             "use --outtype auto (exact Q5_1 blocks)"});
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

// "value 70000 (0x4788b800) at index 12"
std::string value_text(const InexactValue& inexact) {
    char text[96];
    std::snprintf(text, sizeof text, "value %.9g (0x%08x) at index %llu",
                  static_cast<double>(inexact.value), std::bit_cast<uint32_t>(inexact.value),
                  static_cast<unsigned long long>(inexact.index));
    return text;
}

uint64_t packed_bytes(const SourceTensor& source) {
    if (source.int_quant) return source.int_quant->packed_bytes;
    if (source.fp4) return source.fp4->codes.size() + source.fp4->scales.size();
    return source.quant->codes.size() + source.quant->scales.size() + source.quant->mins.size();
}

// "; 1.06x its 1234 source bytes": the planned bytes against the packed source.
std::string size_ratio_text(uint64_t planned, uint64_t packed) {
    char text[96];
    std::snprintf(text, sizeof text, "; %.2fx its %llu source bytes",
                  packed > 0 ? double(planned) / double(packed) : 0.0,
                  static_cast<unsigned long long>(packed));
    return text;
}

// --outtype f16 / bf16 for any tensor: copy or recast when every value is exact, else a Blocker.
bool plan_float_outtype(const SourceTensor& source, OutType outtype, TensorPlan* plan,
                        std::vector<Blocker>* blockers) {
    const bool f16 = outtype == OutType::f16;
    const char* type = f16 ? "F16" : "BF16";
    plan->type = f16 ? GgmlType::F16 : GgmlType::BF16;
    if (!source.is_quantized() &&
        source.float_dtype == (f16 ? FloatDtype::F16 : FloatDtype::BF16)) {
        plan->encoding = f16 ? Encoding::copy_f16 : Encoding::copy_bf16;
        plan->note = std::string(type) + " copied";
        return true;
    }
    if (const auto inexact = first_inexact_value(source, f16 ? FitTarget::f16 : FitTarget::bf16)) {
        blockers->push_back(
            Blocker{source.name,
                    std::string("--outtype ") + outtype_name(outtype) + ": " +
                        value_text(*inexact) + " is not exact in " + type,
                    "use --outtype f32 (exact for every tensor) or --outtype auto"});
        return false;
    }
    if (source.is_quantized()) {
        plan->encoding = f16 ? Encoding::dequant_f16 : Encoding::dequant_bf16;
        plan->note =
            std::string("--outtype ") + outtype_name(outtype) + ": every value exact in " + type;
    } else {
        plan->encoding = f16 ? Encoding::recast_f16 : Encoding::recast_bf16;
        plan->note = std::string(float_dtype_name(source.float_dtype)) + " -> " + type +
                     ", every value exact (--outtype " + outtype_name(outtype) + ")";
    }
    return true;
}

// Integer-zero-point sources: the smallest exact block type (int_quant_rules.cpp), or refusals.
bool plan_int_blocks(const IntQuantView& v, OutType outtype, TensorPlan* plan,
                     std::vector<BlockRefusal>* refusals) {
    IntBlockChoice choice = choose_int_block_type(v, outtype == OutType::q4_1);
    if (choice.encoding) {
        plan->type = choice.type;
        plan->encoding = *choice.encoding;
        plan->note = std::move(choice.note);
        plan->zero_code_groups_get_zero_scale = choice.zero_blocks_get_zero_scale;
        if (const auto nbytes = ggml_nbytes(plan->type, plan->ne))
            plan->note += size_ratio_text(*nbytes, v.packed_bytes);
        return true;
    }
    for (auto& r : choice.refusals) refusals->push_back({std::move(r.reason), std::move(r.fix)});
    return false;
}

// FP4 sources (MLX, ModelOpt, compressed-tensors mxfp4 / nvfp4): ggml's MXFP4 / NVFP4 blocks hold
// the same codes and scale bytes; a row must be whole blocks (32 / 64 values).
bool plan_fp4_blocks(const Fp4View& v, int64_t cols, TensorPlan* plan,
                     std::vector<BlockRefusal>* refusals) {
    const bool mx = v.kind == Fp4Kind::mxfp4;
    const int64_t block = mx ? 32 : 64;
    const char* type = mx ? "MXFP4" : "NVFP4";
    if (cols % block != 0) {
        refusals->push_back({"cols " + std::to_string(cols) + " is not a multiple of " +
                                 std::to_string(block) + ": GGUF rows must be whole " + type +
                                 " blocks",
                             std::string("use ") + kFallbackFix + ", or --outtype f32"});
        return false;
    }
    plan->type = mx ? GgmlType::MXFP4 : GgmlType::NVFP4;
    plan->encoding = mx ? Encoding::mxfp4_repack : Encoding::nvfp4_repack;
    plan->note = std::string(v.origin) + " " + (mx ? "mxfp4" : "nvfp4") + " -> " + type +
                 " blocks: codes reordered, " + (mx ? "E8M0" : "E4M3") + " scale bytes copied";
    return true;
}

bool plan_quantized(const SourceTensor& source, const PlanOptions& options, TensorPlan* plan,
                    std::vector<Blocker>* blockers) {
    const int64_t cols = source.shape.back();  // [rows, cols] or stacked [E, rows, cols]
    const uint64_t n_values = source.element_count();
    plan->ne = reversed(source.shape);
    if (source.fp8) return plan_fp8(source, options, false, plan, blockers);
    if (options.outtype == OutType::f32) {
        plan->type = GgmlType::F32;
        plan->encoding = Encoding::dequant_f32;
        plan->note = "--outtype f32: binary32 values";
        return true;
    }
    if (options.outtype == OutType::f16 || options.outtype == OutType::bf16)
        return plan_float_outtype(source, options.outtype, plan, blockers);
    std::vector<BlockRefusal> refusals;
    if (source.fp4 && options.outtype == OutType::q4_1) {
        refusals.push_back(
            {"FP4 codes are not Q4_1 codes and --outtype q4_1 allows no other "
             "block type",
             "use --outtype auto (exact MXFP4/NVFP4 blocks)"});
    } else if (source.fp4) {
        if (plan_fp4_blocks(*source.fp4, cols, plan, &refusals)) return true;
    } else if (source.int_quant &&
               plan_int_blocks(*source.int_quant, options.outtype, plan, &refusals))
        return true;
    if (source.quant) refusals = block_refusals(*source.quant, cols, options.outtype);
    BlockScaleCheck scales;
    if (source.quant && refusals.empty()) {
        const QuantView& q = *source.quant;
        scales = check_block_scales(q, n_values);
        if (scales.problem)
            refusals.push_back(
                {*scales.problem,
                 std::string("re-export with fp16 scales and mins, or use ") + kFallbackFix});
    }
    if (refusals.empty()) {
        const QuantView& q = *source.quant;
        const bool q5 = q.bits == 5;
        plan->type = q5 ? GgmlType::Q5_1 : GgmlType::Q4_1;
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
    const bool f16 = !first_inexact_value(source, FitTarget::f16).has_value();
    const uint64_t fallback_bytes = n_values * (f16 ? 2 : 4);
    if (!options.allow_lossless_fallback) {
        // Every reason is its own Blocker; the first one also says what the fallback would cost.
        const uint64_t packed = packed_bytes(source);
        char cost[256];
        std::snprintf(
            cost, sizeof cost,
            "; the exact fallback would store it as %s: %llu bytes, %.2fx its %llu packed "
            "bytes (+%llu bytes)",
            f16 ? "F16" : "F32", static_cast<unsigned long long>(fallback_bytes),
            packed > 0 ? double(fallback_bytes) / double(packed) : 0.0,
            static_cast<unsigned long long>(packed),
            static_cast<unsigned long long>(fallback_bytes - std::min(fallback_bytes, packed)));
        for (size_t i = 0; i < refusals.size(); ++i) {
            Blocker blocker{source.name, std::move(refusals[i].reason), std::move(refusals[i].fix)};
            if (i == 0) {
                blocker.fix += cost;
                blocker.fallback_growth_bytes = fallback_bytes - std::min(fallback_bytes, packed);
            }
            blockers->push_back(std::move(blocker));
        }
        return false;
    }
    plan->type = f16 ? GgmlType::F16 : GgmlType::F32;
    plan->encoding = f16 ? Encoding::dequant_f16 : Encoding::dequant_f32;
    plan->note =
        "fallback (" + joined_reasons(refusals) + ") -> " +
        (f16 ? "F16: every value is exact in fp16" : "F32: some value is not exact in fp16");
    return true;
}

// plan->ne from the source shape (ggml order), or a blocker when no GGUF tensor has that rank.
bool plan_ne(const SourceTensor& source, TensorPlan* plan, std::vector<Blocker>* blockers) {
    if (source.shape.empty() || source.shape.size() > 4) {
        blockers->push_back(Blocker{source.name,
                                    "a " + std::to_string(source.shape.size()) +
                                        "-D tensor cannot be a GGUF tensor (expected 1 to 4 dims)",
                                    "reshape or remove the tensor"});
        return false;
    }
    plan->ne = reversed(source.shape);
    return true;
}

bool plan_float(const SourceTensor& source, const std::string& gguf_name, OutType outtype,
                TensorPlan* plan, std::vector<Blocker>* blockers) {
    if (!plan_ne(source, plan, blockers)) return false;
    // ModelBase.prepare_tensors: 1-D tensors, norms and every name not ending in ".weight" (the
    // stacked experts' 2-D biases) are F32.
    const bool always_f32 = source.shape.size() == 1 || gguf_name.ends_with("norm.weight") ||
                            gguf_name.ends_with(".bias");
    if (!always_f32 && (outtype == OutType::f16 || outtype == OutType::bf16))
        return plan_float_outtype(source, outtype, plan, blockers);
    const std::string dtype = float_dtype_name(source.float_dtype);
    if (always_f32 || outtype == OutType::f32 || source.float_dtype == FloatDtype::F32) {
        plan->type = GgmlType::F32;
        plan->encoding =
            source.float_dtype == FloatDtype::F32 ? Encoding::copy_f32 : Encoding::widen_f32;
        plan->note =
            source.float_dtype == FloatDtype::F32
                ? "F32 copied"
                : dtype + " widened to F32 exactly" +
                      (always_f32 ? " (norms and 1-D tensors stay F32)" : " (--outtype f32)");
    } else if (source.float_dtype == FloatDtype::F16) {
        plan->type = GgmlType::F16;
        plan->encoding = Encoding::copy_f16;
        plan->note = "F16 copied";
    } else {
        plan->type = GgmlType::BF16;
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

bool plan_exact_f32(const SourceTensor& source, size_t source_index, const std::string& gguf_name,
                    const std::string& arch, const std::string& what, TensorPlan* plan,
                    std::vector<Blocker>* blockers, bool fp8_lossy) {
    plan->source_index = source_index;
    plan->gguf_name = gguf_name;
    if (!plan_ne(source, plan, blockers)) return false;
    plan->type = GgmlType::F32;
    const std::string convention = " (the " + arch + " registry writes the " + what +
                                   " as exact F32, as llama.cpp's converter does)";
    if (source.fp8) {
        PlanOptions f32;
        if (fp8_lossy) f32.fp8_rounded_to = GgmlType::F32;
        if (!plan_fp8(source, f32, true, plan, blockers)) return false;
        plan->note = what + ": " + plan->note + convention;
    } else if (source.is_quantized()) {
        plan->encoding = Encoding::dequant_f32;
        plan->note = what + ": " + std::to_string(source.quant_bits()) + "-bit codes, group " +
                     std::to_string(source.quant_group()) + " -> exact F32 values " +
                     (source.int_quant ? "(q-z)*scale"
                      : source.fp4     ? "E2M1*scale"
                                       : "code*scale+min") +
                     " in binary32" + convention;
    } else {
        plan->encoding =
            source.float_dtype == FloatDtype::F32 ? Encoding::copy_f32 : Encoding::widen_f32;
        plan->note =
            what + ": " + float_dtype_name(source.float_dtype) +
            (source.float_dtype == FloatDtype::F32 ? " copied" : " widened to F32 exactly") +
            convention;
    }
    plan->nbytes = 4 * source.element_count();
    return true;
}

}  // namespace rebox::plan_detail
