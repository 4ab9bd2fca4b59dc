// The plan's per-group and per-value exactness checks on a QuantView, read straight from the
// (memory-mapped) source, a group or a chunk at a time: whether its scales/mins can become the fp16
// d/m of Q4_1/Q5_1 blocks, and whether its dequantized values all fit fp16 (exact F16 fallback).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "rebox/source/source_model.hpp"

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

// True when every value float(code)*float(scale)+float(min) (binary32) is exactly fp16.
bool values_fit_f16(const QuantView& q, uint64_t n_values);

}  // namespace rebox::plan_detail
