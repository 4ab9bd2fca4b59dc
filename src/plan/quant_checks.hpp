// The plan's per-group and per-value exactness checks on a QuantView, read straight from the
// (memory-mapped) source, a group or a chunk at a time: whether its scales/mins can become the fp16
// d/m of Q4_1/Q5_1, and whether a tensor's values all fit fp16 or bf16 (exact fallback, --outtype
// f16/bf16).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "source/source_model.hpp"

namespace rebox::plan_detail {

struct BlockScaleCheck {
    // The first group whose scale or min cannot become fp16 exactly, described with its value.
    std::optional<std::string> problem;
    // Groups whose scale is not exact in fp16 but finite, with all codes 0: carried with d = +-0.
    uint64_t zero_scale_groups = 0;
};

// Every group's min must convert to fp16 exactly; every scale too, except a finite scale in a group
// whose codes are all 0 (only its min matters there). F16 scales are not scanned (always exact).
BlockScaleCheck check_block_scales(const QuantView& q, uint64_t n_values);

enum class FitTarget { f16, bf16 };
struct InexactValue {
    uint64_t index = 0;  // flat (row-major) index of the value
    float value = 0;
};
// The first value a target float type cannot hold exactly; nullopt when every value fits.
std::optional<InexactValue> first_inexact_value(const SourceTensor& tensor, FitTarget target);

}  // namespace rebox::plan_detail
