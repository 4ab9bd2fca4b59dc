// choose_int_block_type: the exactness rules for integer-zero-point sources. ggml dequantizes
// Q4_0/Q5_0/Q8_0 as (q' - off) * d, an exact binary32 product, so q' = q - z + off with d = s holds
// every value bit for bit when s is an fp16 value and every used q - z lies in the type's range;
// Q4_1 / Q5_1 (q*d + m with m = -z*s) only when every s > 0 and every -z*s is an fp16 value (s <= 0
// would turn a -0 into +0). Structural conditions first (whole 32-value blocks inside one group),
// then one pass over zero points and scales, and a pass over the codes only when the zero points do
// not already bound q - z inside Q4_0's range or a scale is not an fp16 value.
#include "int_quant_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "format/half.hpp"
#include "rebox/ggml_type.hpp"
#include "source/int_quant_view.hpp"

namespace rebox::plan_detail {
namespace {

constexpr const char* kFallbackFix = "--allow-lossless-fallback (exact F16/F32 copy)";

std::string range_text(int lo, int hi) {
    char text[32];
    std::snprintf(text, sizeof text, "[%d, %d]", lo, hi);
    return text;
}

std::string scale_text(const IntQuantView& v, int64_t row, int64_t group) {
    char text[128];
    std::snprintf(text, sizeof text, "scale %.9g (%s) of row %lld group %lld",
                  static_cast<double>(int_scale(v, row, group)), float_dtype_name(v.scale_dtype),
                  static_cast<long long>(row), static_cast<long long>(group));
    return text;
}

// Whole 32-value blocks, each inside one group; else the refusal.
std::optional<IntBlockChoice::Refusal> structure_problem(const IntQuantView& v) {
    if (v.cols % 32 != 0)
        return IntBlockChoice::Refusal{
            "cols " + std::to_string(v.cols) +
                " is not a multiple of 32: GGUF rows must be whole 32-value blocks",
            std::string("use ") + kFallbackFix + ", or --outtype f32"};
    if (v.g_idx.empty()) {
        if (v.group % 32 != 0 && v.group < v.cols)
            return IntBlockChoice::Refusal{
                "group " + std::to_string(v.group) +
                    " is not a multiple of 32: a 32-value block would span two groups (two scales)",
                std::string("re-export with a group size that is a multiple of 32, or use ") +
                    kFallbackFix};
        return std::nullopt;
    }
    for (int64_t k0 = 0; k0 < v.cols; k0 += 32) {
        const uint32_t g0 = int_group_of(v, k0);
        for (int64_t k = k0 + 1; k < k0 + 32; ++k) {
            const uint32_t g = int_group_of(v, k);
            if (g == g0) continue;
            return IntBlockChoice::Refusal{
                "g_idx (act-order) puts input column " + std::to_string(k) + " in group " +
                    std::to_string(g) + " but column " + std::to_string(k0) + " in group " +
                    std::to_string(g0) +
                    ": a 32-value block has one scale, and GGUF cannot reorder input columns",
                "re-quantize without act-order (desc_act false / actorder null), or use " +
                    std::string(kFallbackFix)};
        }
    }
    return std::nullopt;
}

struct CodeScan {
    int lo = 0, hi = 0;        // the used q - z
    uint64_t zero_blocks = 0;  // blocks with all q - z = 0 whose scale is not an fp16 value
    std::optional<std::string> scale_problem;
};

// Every block once: the used range of q - z, and each block whose scale is not an fp16 value must
// have all q - z = 0 (its values are 0 * s; d = +-0 gives the same bits).
CodeScan scan_blocks(const IntQuantView& v) {
    CodeScan scan{32767, -32768, 0, std::nullopt};
    int16_t codes[32];
    for (int64_t r = 0; r < v.rows; ++r) {
        for (int64_t k0 = 0; k0 < v.cols; k0 += 32) {
            const int64_t g = int_group_of(v, k0);
            const int32_t z = int_zero(v, r, g);
            int_row_codes(v, r, k0, 32, codes);
            bool all_zero = true;
            for (int j = 0; j < 32; ++j) {
                const int d = codes[j] - z;
                scan.lo = std::min(scan.lo, d);
                scan.hi = std::max(scan.hi, d);
                all_zero &= d == 0;
            }
            if (v.scale_dtype == FloatDtype::F16) continue;
            const float s = int_scale(v, r, g);
            if (float_to_half_exact(s, nullptr)) continue;
            if (all_zero && std::isfinite(s)) {
                ++scan.zero_blocks;
                continue;
            }
            if (!scan.scale_problem)
                scan.scale_problem = scale_text(v, r, g) +
                                     " is not exactly representable as fp16 and the block at "
                                     "column " +
                                     std::to_string(k0) + " has non-zero q - z";
        }
    }
    return scan;
}

// Why Q4_1 / Q5_1 (d = s, m = -z*s; codes of up to code_bits) is not exact for some group, or
// nullopt when it is for all.
std::optional<std::string> q_1_problem(const IntQuantView& v, int code_bits) {
    if (v.bits > code_bits || v.code_layout == IntCodeLayout::row_int8)
        return std::to_string(v.bits) + "-bit codes do not fit " + std::to_string(code_bits) +
               " bits";
    for (int64_t r = 0; r < v.rows; ++r)
        for (int64_t g = 0; g < v.n_groups; ++g) {
            const float s = int_scale(v, r, g);
            if (!(s > 0) || !float_to_half_exact(s, nullptr))
                return scale_text(v, r, g) + " is not a positive fp16 value";
            const int32_t z = int_zero(v, r, g);
            if (!float_to_half_exact(-(static_cast<float>(z) * s), nullptr))
                return "-z*s = -" + std::to_string(z) + " * " + scale_text(v, r, g) +
                       " is not an fp16 value";
        }
    return std::nullopt;
}

}  // namespace

IntBlockChoice choose_int_block_type(const IntQuantView& v, bool q4_1_only) {
    IntBlockChoice choice;
    if (auto problem = structure_problem(v)) {
        choice.refusals.push_back(std::move(*problem));
        return choice;
    }
    // Bounds of q - z from the zero points alone (codes are [0, 2^bits) or signed bytes).
    int zmin = 1 << 30, zmax = -(1 << 30);
    for (int64_t r = 0; r < v.rows; ++r)
        for (int64_t g = 0; g < v.n_groups; ++g) {
            const int32_t z = int_zero(v, r, g);
            zmin = std::min(zmin, z);
            zmax = std::max(zmax, z);
        }
    const bool signed_codes = v.code_layout == IntCodeLayout::row_int8;
    const int qmin = signed_codes ? -128 : 0, qmax = signed_codes ? 127 : (1 << v.bits) - 1;
    int lo = qmin - zmax, hi = qmax - zmin;
    std::string range_kind = "every possible q - z in ";
    CodeScan scan;
    const bool bounded_to_q4_0 = lo >= -8 && hi <= 7;
    if (!bounded_to_q4_0 || v.scale_dtype != FloatDtype::F16) {
        scan = scan_blocks(v);
        if (scan.scale_problem) {
            choice.refusals.push_back(
                {*scan.scale_problem,
                 std::string("re-export with fp16 scales, or use ") + kFallbackFix});
            return choice;
        }
        if (!bounded_to_q4_0) {
            lo = scan.lo, hi = scan.hi;
            range_kind = "q - z in ";
        }
    }
    const std::string zeros =
        zmin == zmax ? "z = " + std::to_string(zmin) : "z in " + range_text(zmin, zmax);
    const std::string head = std::to_string(v.bits) + "-bit " + v.method + " (" + zeros + "), " +
                             range_kind + range_text(lo, hi) + " -> ";
    const auto choose = [&](Encoding encoding, GgmlType type, const std::string& why) {
        choice.encoding = encoding;
        choice.type = type;
        choice.note = head + ggml_type_name(choice.type) + why;
        if (scan.zero_blocks > 0) {
            choice.zero_blocks_get_zero_scale = true;
            choice.note += "; " + std::to_string(scan.zero_blocks) +
                           " block(s) with all q - z = 0 and a scale not exact in fp16 get d = 0";
        }
        return choice;
    };
    if (q4_1_only) {
        if (const auto problem = q_1_problem(v, 4)) {
            choice.refusals.push_back(
                {"--outtype q4_1: " + *problem,
                 "use --outtype auto (Q4_0/Q5_0/Q8_0 blocks by shifting codes)"});
            return choice;
        }
        return choose(Encoding::q4_1_int, GgmlType::Q4_1, " (d = s, m = -z*s, all exact)");
    }
    if (lo >= -8 && hi <= 7)
        return choose(Encoding::q4_0_shift, GgmlType::Q4_0, " (q' = q - z + 8, d = s)");
    const auto q4_1 = q_1_problem(v, 4);
    if (!q4_1) return choose(Encoding::q4_1_int, GgmlType::Q4_1, " (d = s, m = -z*s, all exact)");
    if (lo >= -16 && hi <= 15)
        return choose(Encoding::q5_0_shift, GgmlType::Q5_0,
                      " (q' = q - z + 16, d = s; Q4_1 not exact: " + *q4_1 + ")");
    if (v.bits == 5 && !q_1_problem(v, 5))
        return choose(Encoding::q5_1_int, GgmlType::Q5_1, " (d = s, m = -z*s, all exact)");
    if (lo >= -128 && hi <= 127)
        return choose(Encoding::q8_0_shift, GgmlType::Q8_0, " (q' = q - z, d = s)");
    choice.refusals.push_back(
        {"q - z reaches " + range_text(lo, hi) +
             ", outside Q8_0's [-128, 127]: no ggml block type holds the values exactly",
         std::string("use ") + kFallbackFix + ", or --outtype f32"});
    return choice;
}

}  // namespace rebox::plan_detail
