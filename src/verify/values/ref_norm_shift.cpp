// gemma norm + 1 as the converter computes it (ref_norm_shift.hpp).
#include "verify/values/ref_norm_shift.hpp"

#include <cfenv>
#include <cmath>
#include <limits>

namespace rebox::verify_ref {

double round_to_fp16(double x) {
    if (x == 0.0 || !std::isfinite(x)) return x;
    // fp16: 11 significant bits, smallest normal exponent -14, subnormal spacing 2^-24.
    const int exponent = std::max(std::ilogb(x), -14);
    const double spacing = std::ldexp(1.0, exponent - 10);
    // x / spacing is exact (a power-of-two scaling); nearbyint rounds ties to even in the default
    // rounding mode.
    const double rounded = std::nearbyint(x / spacing) * spacing;
    if (std::fabs(rounded) > 65504.0)
        return std::copysign(std::numeric_limits<double>::infinity(), x);
    return rounded;
}

void add_one_as_converter(SourceFloat dtype, std::span<float> values) {
    if (dtype == SourceFloat::F16) {
        // An fp16 value plus 1 is exact in double (at most 41 significant bits); one rounding.
        for (float& v : values) v = static_cast<float>(round_to_fp16(static_cast<double>(v) + 1.0));
        return;
    }
    for (float& v : values) v = v + 1.0f;
}

}  // namespace rebox::verify_ref
