// check_fp8_fit / plan_fp8 (fp8_rules.hpp): the exactness scan over the products and the choice
// of the smallest float type that holds them all.
#include "fp8_rules.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "format/half.hpp"
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
    Fp8Fit fit;
    const uint64_t n = v.codes.size(), cols = static_cast<uint64_t>(v.cols);
    for (uint64_t i = 0; i < n; ++i) {
        const int64_t r = static_cast<int64_t>(i / cols), c = static_cast<int64_t>(i % cols);
        const double code = e4m3_to_double(v.codes[i]);
        const double scale = fp8_scale(v, r / v.block_rows, c / v.block_cols);
        const double product = code * scale;  // exact: 4 significant bits times at most 24
        if (!is_binary32(product)) {
            fit.not_f32 = i;
            fit.code_value = code, fit.scale = scale, fit.product = product;
            return fit;
        }
        const float f = static_cast<float>(product);
        if (fit.f16) fit.f16 = float_to_half_exact(f, nullptr);
        if (fit.bf16) fit.bf16 = float_to_bf16_exact(f, nullptr);
    }
    return fit;
}

bool plan_fp8(const SourceTensor& source, const PlanOptions& options, bool exact_f32_role,
              TensorPlan* plan, std::vector<Blocker>* blockers) {
    const Fp8View& v = *source.fp8;
    const Fp8Fit fit = check_fp8_fit(v);
    if (fit.not_f32) {
        blockers->push_back(Blocker{
            source.name,
            fp8_value_text(v, fit) + std::string(" (") + float_dtype_name(v.scale_dtype) +
                " scales): no GGUF type holds this tensor exactly",
            "there is no exact GGUF carriage for it. rebox writes no rounded values; "
            "llama.cpp's convert_hf_to_gguf.py dequantizes FP8 to BF16/F16/Q8_0 (lossy), and "
            "rebox's --quantize starts from the exact conversion, so it cannot start from this "
            "tensor either"});
        return false;
    }
    const uint64_t n = source.element_count();
    const char* dtype = float_dtype_name(v.scale_dtype);
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
    const uint64_t packed = v.codes.size() + v.scales.size();
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

}  // namespace rebox::plan_detail
