// Every lane kernel for one lane type V, by GgmlType (each type's ref and imatrix paths are chosen
// inside its kernel). Included only by lane_kernels_<isa>.cpp.
#pragma once

#include <cstdint>

#include "quantize/simd/fp4_lanes.hpp"
#include "quantize/simd/iq4_lanes.hpp"
#include "quantize/simd/legacy_lanes.hpp"
#include "quantize/simd/q1_0_q2_0_lanes.hpp"
#include "quantize/simd/q2_k_lanes.hpp"
#include "quantize/simd/q3_k_lanes.hpp"
#include "quantize/simd/q4_1_q5_1_lanes.hpp"
#include "quantize/simd/q4_k_q5_k_lanes.hpp"
#include "quantize/simd/q6_k_lanes.hpp"
#include "quantize/simd/simd_entries.hpp"
#include "quantize/simd/ternary_lanes.hpp"

namespace rebox::quant::lanes {
namespace {

template <class V>
simd::LaneKernel lane_kernel(GgmlType type) {
    switch (type) {
        case GgmlType::Q2_K:
            return q2_k_rows<V>;
        case GgmlType::Q3_K:
            return q3_k_rows<V>;
        case GgmlType::Q4_K:
            return q4_k_rows<V, Q4K>;
        case GgmlType::Q5_K:
            return q4_k_rows<V, Q5K>;
        case GgmlType::Q6_K:
            return q6_k_rows<V>;
        case GgmlType::Q8_0:
            return q8_0_all_rows<V>;
        case GgmlType::Q4_0:
            return block32_rows<V, Q40>;
        case GgmlType::Q5_0:
            return block32_rows<V, Q50>;
        case GgmlType::Q4_1:
            return block32_rows<V, Q41>;
        case GgmlType::Q5_1:
            return block32_rows<V, Q51>;
        case GgmlType::MXFP4:
            return mxfp4_rows<V>;
        case GgmlType::NVFP4:
            return nvfp4_rows<V>;
        case GgmlType::TQ1_0:
            return tq1_0_rows<V>;
        case GgmlType::TQ2_0:
            return tq2_0_rows<V>;
        case GgmlType::Q1_0:
            return q1_0_rows<V>;
        case GgmlType::Q2_0:
            return q2_0_rows<V>;
        case GgmlType::IQ4_NL:
            return iq4_nl_rows<V>;
        case GgmlType::IQ4_XS:
            return iq4_xs_rows<V>;
        default:
            return nullptr;
    }
}

}  // namespace
}  // namespace rebox::quant::lanes
