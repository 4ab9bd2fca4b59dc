// check_fp8_fit / plan_fp8 (fp8_rules.hpp): the exactness scan over the products and the choice
// of the smallest float type that holds them all.
#include "fp8_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "format/half.hpp"
#include "format/safetensors.hpp"
#include "rebox/ggml_type.hpp"
#include "source/fp8_values.hpp"

namespace rebox::plan_detail {
namespace {

// True when d is a binary32 value (finite, in range, no bit lost).
bool is_binary32(double d) {
    if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) return false;
    return static_cast<double>(static_cast<float>(d)) == d;
}

std::string fp8_value_text(const Fp8View& v, const Fp8Fit& fit) {
    const uint64_t i = *fit.not_f32, cols = static_cast<uint64_t>(v.cols);
    const uint64_t r = i / cols, c = i % cols;
    char text[320];
    std::snprintf(text, sizeof text,
                  "FP8 value at row %llu, column %llu (block %llu, %llu: the first that cannot be "
                  "held) is e4m3 %.17g x scale %.17g = %.17g, which is not a binary32 value",
                  static_cast<unsigned long long>(r), static_cast<unsigned long long>(c),
                  static_cast<unsigned long long>(r / static_cast<uint64_t>(v.block_rows)),
                  static_cast<unsigned long long>(c / static_cast<uint64_t>(v.block_cols)),
                  fit.code_value, fit.scale, fit.product);
    return text;
}

}  // namespace

Fp8Fit check_fp8_fit(const Fp8View& v) {
    const std::array<double, 256>& e4m3 = e4m3_table();
    Fp8Fit fit;
    const uint64_t cols = static_cast<uint64_t>(v.cols),
                   block = static_cast<uint64_t>(v.block_cols);
    for (uint64_t r = 0; r < static_cast<uint64_t>(v.rows); ++r)
        for (uint64_t c0 = 0; c0 < cols; c0 += block) {  // one run of values sharing a scale
            const double scale = fp8_scale(v, static_cast<int64_t>(r) / v.block_rows,
                                           static_cast<int64_t>(c0 / block));
            const uint64_t end = std::min(cols, c0 + block);
            for (uint64_t i = r * cols + c0; i < r * cols + end; ++i) {
                const double product = e4m3[v.codes[i]] * scale;  // exact: 4 x at most 24 bits
                if (!is_binary32(product)) {
                    fit.not_f32 = i;
                    fit.code_value = e4m3[v.codes[i]], fit.scale = scale, fit.product = product;
                    return fit;
                }
                const float f = static_cast<float>(product);
                if (fit.f16) fit.f16 = float_to_half_exact(f, nullptr);
                if (fit.bf16) fit.bf16 = float_to_bf16_exact(f, nullptr);
            }
        }
    return fit;
}

namespace {

// The Blocker of a product binary32 cannot hold.
void block_not_f32(const SourceTensor& source, const Fp8Fit& fit, std::vector<Blocker>* blockers) {
    const Fp8View& v = *source.fp8;
    blockers->push_back(
        Blocker{source.name,
                fp8_value_text(v, fit) + std::string(" (") + float_dtype_name(v.scale_dtype) +
                    " scales): no GGUF type holds this tensor exactly",
                "there is no exact GGUF carriage for it. rebox writes no rounded values; "
                "llama.cpp's convert_hf_to_gguf.py dequantizes FP8 to BF16/F16/Q8_0 (lossy), and "
                "rebox's --quantize starts from the exact conversion, so it cannot start from this "
                "tensor either"});
}

// The type for values that fit as `fit` says (every product a binary32 value): `source` names the
// tensor (expert 0 of a stack), n its values, packed its source bytes.
bool choose_fp8_type(const SourceTensor& source, const Fp8Fit& fit, uint64_t n, uint64_t packed,
                     const PlanOptions& options, bool exact_f32_role, TensorPlan* plan,
                     std::vector<Blocker>* blockers) {
    const char* dtype = float_dtype_name(source.fp8->scale_dtype);
    const std::string what = "FP8 e4m3 x " + std::string(dtype) + " block scale";
    const auto choose = [&](GgmlType type, Encoding encoding, const std::string& why) {
        plan->type = type;
        plan->encoding = encoding;
        plan->note = what + " -> " + ggml_type_name(type) + ": " + why;
        return true;
    };
    if (exact_f32_role || options.outtype == OutType::f32)
        return choose(GgmlType::F32, Encoding::dequant_f32, "every product exact in binary32");
    if (options.outtype == OutType::f16 || options.outtype == OutType::bf16) {
        const bool f16 = options.outtype == OutType::f16;
        if (f16 ? fit.f16 : fit.bf16)
            return choose(f16 ? GgmlType::F16 : GgmlType::BF16,
                          f16 ? Encoding::dequant_f16 : Encoding::dequant_bf16,
                          std::string("every product exact in ") + (f16 ? "F16" : "BF16") +
                              " (--outtype " + outtype_name(options.outtype) + ")");
        blockers->push_back(Blocker{source.name,
                                    std::string("--outtype ") + outtype_name(options.outtype) +
                                        ": some FP8 product is not exact in " +
                                        (f16 ? "F16" : "BF16"),
                                    "use --outtype f32 (exact for every FP8 tensor) or "
                                    "--outtype auto with --allow-lossless-fallback"});
        return false;
    }
    const GgmlType type = fit.f16 ? GgmlType::F16 : fit.bf16 ? GgmlType::BF16 : GgmlType::F32;
    const uint64_t bytes = n * (type == GgmlType::F32 ? 4 : 2);
    if (!options.allow_lossless_fallback) {
        char cost[256];
        std::snprintf(cost, sizeof cost,
                      "; the exact copy would store it as %s: %llu bytes, %.2fx its %llu packed "
                      "bytes (+%llu bytes)",
                      ggml_type_name(type).c_str(), static_cast<unsigned long long>(bytes),
                      packed > 0 ? double(bytes) / double(packed) : 0.0,
                      static_cast<unsigned long long>(packed),
                      static_cast<unsigned long long>(bytes - std::min(bytes, packed)));
        Blocker blocker{source.name,
                        what + ": no ggml block type holds E4M3 values times a block scale",
                        std::string("use --allow-lossless-fallback (exact F16/BF16/F32 copy, the "
                                    "smallest that holds every product)") +
                            cost};
        blocker.fallback_growth_bytes = bytes - std::min(bytes, packed);
        blockers->push_back(std::move(blocker));
        return false;
    }
    return choose(type,
                  type == GgmlType::F16    ? Encoding::dequant_f16
                  : type == GgmlType::BF16 ? Encoding::dequant_bf16
                                           : Encoding::dequant_f32,
                  type == GgmlType::F32 ? "some product is not exact in F16 or BF16"
                                        : std::string("every product exact in ") +
                                              ggml_type_name(type) + " (smallest exact type)");
}

}  // namespace

namespace {

// The first value of the view whose binary32 product is NaN or infinite (a NaN code, a non-finite
// scale, or a product beyond binary32's range), as a row-major index.
std::optional<uint64_t> first_non_finite(const Fp8View& v) {
    const std::array<double, 256>& e4m3 = e4m3_table();
    const uint64_t cols = static_cast<uint64_t>(v.cols),
                   block = static_cast<uint64_t>(v.block_cols);
    for (uint64_t r = 0; r < static_cast<uint64_t>(v.rows); ++r)
        for (uint64_t c0 = 0; c0 < cols; c0 += block) {
            const double scale = fp8_scale(v, static_cast<int64_t>(r) / v.block_rows,
                                           static_cast<int64_t>(c0 / block));
            const uint64_t end = std::min(cols, c0 + block);
            for (uint64_t i = r * cols + c0; i < r * cols + end; ++i)
                if (!std::isfinite(static_cast<float>(e4m3[v.codes[i]] * scale))) return i;
        }
    return std::nullopt;
}

// The lossy path (options.fp8_rounded_to): the converter's dequantization, weight.float() *
// scale.float() (one binary32 product), rounded to its output type.
bool choose_fp8_rounded(const SourceTensor& source, GgmlType type, TensorPlan* plan,
                        std::vector<Blocker>* blockers) {
    if (const auto at = first_non_finite(*source.fp8)) {
        blockers->push_back(Blocker{
            source.name,
            "FP8 value " + std::to_string(*at) +
                " is NaN or infinite once multiplied by its scale; llama-quantize would quantize "
                "it into meaningless blocks",
            "fix the checkpoint's NaN codes or scales"});
        return false;
    }
    plan->type = type;
    plan->encoding = type == GgmlType::F16    ? Encoding::dequant_f16
                     : type == GgmlType::BF16 ? Encoding::dequant_bf16
                                              : Encoding::dequant_f32;
    plan->note = "FP8 e4m3 x " + std::string(float_dtype_name(source.fp8->scale_dtype)) +
                 " block scale -> " + ggml_type_name(type) + ": the binary32 product" +
                 (type == GgmlType::F32 ? "" : " rounded to " + ggml_type_name(type)) +
                 ", as llama.cpp's converter writes it (--quantize: the lossy path)";
    return true;
}

}  // namespace

bool plan_fp8(const SourceTensor& source, const PlanOptions& options, bool exact_f32_role,
              TensorPlan* plan, std::vector<Blocker>* blockers) {
    if (options.fp8_rounded_to)
        return choose_fp8_rounded(source, exact_f32_role ? GgmlType::F32 : *options.fp8_rounded_to,
                                  plan, blockers);
    const Fp8Fit fit = check_fp8_fit(*source.fp8);
    if (fit.not_f32) {
        block_not_f32(source, fit, blockers);
        return false;
    }
    return choose_fp8_type(source, fit, source.element_count(),
                           source.fp8->codes.size() + source.fp8->scales.size(), options,
                           exact_f32_role, plan, blockers);
}

bool plan_fp8_experts(const std::vector<const SourceTensor*>& experts, const PlanOptions& options,
                      TensorPlan* plan, std::vector<Blocker>* blockers) {
    if (options.fp8_rounded_to) {
        for (const SourceTensor* expert : experts)
            if (!choose_fp8_rounded(*expert, *options.fp8_rounded_to, plan, blockers)) return false;
        plan->note += " (for every expert)";
        return true;
    }
    Fp8Fit all;
    uint64_t n = 0, packed = 0;
    for (const SourceTensor* expert : experts) {
        const Fp8Fit fit = check_fp8_fit(*expert->fp8);
        if (fit.not_f32) {
            block_not_f32(*expert, fit, blockers);
            return false;
        }
        all.f16 = all.f16 && fit.f16;
        all.bf16 = all.bf16 && fit.bf16;
        n += expert->element_count();
        packed += expert->fp8->codes.size() + expert->fp8->scales.size();
    }
    if (!choose_fp8_type(*experts.front(), all, n, packed, options, false, plan, blockers))
        return false;
    plan->note += " (for every expert)";
    return true;
}

std::optional<GgmlType> fp8_converter_outtype(const SourceModel& source, OutType outtype) {
    if (std::none_of(source.tensors.begin(), source.tensors.end(),
                     [](const SourceTensor& t) { return t.fp8.has_value(); }))
        return std::nullopt;
    if (outtype == OutType::f32) return GgmlType::F32;
    if (outtype == OutType::f16) return GgmlType::F16;
    if (outtype == OutType::bf16) return GgmlType::BF16;
    std::vector<const SafetensorsFile*> files;
    for (const auto& file : source.files) files.push_back(file.get());
    std::sort(files.begin(), files.end(), [](const SafetensorsFile* a, const SafetensorsFile* b) {
        return a->path().filename() < b->path().filename();
    });
    for (const SafetensorsFile* file : files)
        for (const StTensorInfo& t : file->tensors()) {
            if (t.shape.size() < 2) continue;
            if (t.dtype == StDtype::BF16) return GgmlType::BF16;
            if (t.dtype == StDtype::F16) return GgmlType::F16;
        }
    return GgmlType::F16;
}

}  // namespace rebox::plan_detail
