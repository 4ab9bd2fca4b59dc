// check_block_scales: one pass over a tensor's BF16/F32 scales and mins (docs/formats.md
// §0: a bf16 value is fp16-exact in [2^-17, 2^16); constant groups store scale ~1e-7 with all codes
// 0). Codes are read only for groups whose scale is not exact.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "encode/block_encode.hpp"
#include "format/half.hpp"
#include "format/half_exact.hpp"
#include "quant_checks.hpp"

namespace rebox::plan_detail {
namespace {

float stored_value(FloatDtype dtype, const uint8_t* p) {
    if (dtype == FloatDtype::F32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    const uint16_t bits = static_cast<uint16_t>(p[0] | p[1] << 8);
    return dtype == FloatDtype::BF16 ? bf16_to_float(bits) : half_to_float(bits);
}

// The BF16/F32 value at p exactly as fp16? From its bits, inline: one call per group.
bool exact_in_half(FloatDtype dtype, const uint8_t* p) {
    if (dtype == FloatDtype::BF16)
        return bf16_half_exact(static_cast<uint16_t>(p[0] | p[1] << 8), nullptr);
    uint32_t bits;
    std::memcpy(&bits, p, 4);
    return half_exact_bits(bits, nullptr);
}

// "min of group 3 (-1.0000000e-07 = bf16 0xb3d7)": the value exactly, and its stored bits.
std::string describe(const char* what, uint64_t group, FloatDtype dtype, const uint8_t* p) {
    char text[96];
    if (dtype == FloatDtype::F32) {
        uint32_t bits;
        std::memcpy(&bits, p, 4);
        std::snprintf(text, sizeof text, "%s of group %llu (%.9g = f32 0x%08x)", what,
                      static_cast<unsigned long long>(group), stored_value(dtype, p), bits);
    } else {
        std::snprintf(text, sizeof text, "%s of group %llu (%.9g = %s 0x%04x)", what,
                      static_cast<unsigned long long>(group), stored_value(dtype, p),
                      float_dtype_name(dtype), static_cast<unsigned>(p[0] | p[1] << 8));
    }
    return text;
}

}  // namespace

BlockScaleCheck check_block_scales(const QuantView& q, uint64_t n_values) {
    BlockScaleCheck result;
    if (q.scale_dtype == FloatDtype::F16 || q.group <= 0) return result;
    const size_t width = float_dtype_size(q.scale_dtype);
    const uint64_t groups = n_values / static_cast<uint64_t>(q.group);
    if (q.scales.size() < groups * width || q.mins.size() < groups * width) {
        result.problem = "scales/mins hold fewer than the " + std::to_string(groups) + " groups";
        return result;
    }
    for (uint64_t g = 0; g < groups; ++g) {
        const uint8_t* min = q.mins.data() + g * width;
        if (!exact_in_half(q.scale_dtype, min)) {
            result.problem =
                describe("min", g, q.scale_dtype, min) + " is not exactly representable as fp16";
            return result;
        }
        const uint8_t* scale = q.scales.data() + g * width;
        if (exact_in_half(q.scale_dtype, scale)) continue;
        const float value = stored_value(q.scale_dtype, scale);
        if (std::isfinite(value) && group_codes_all_zero(q, g)) {
            ++result.zero_scale_groups;
            continue;
        }
        result.problem = describe("scale", g, q.scale_dtype, scale) +
                         " is not exactly representable as fp16" +
                         (std::isfinite(value) ? " and the group has non-zero codes" : "");
        return result;
    }
    return result;
}

}  // namespace rebox::plan_detail
