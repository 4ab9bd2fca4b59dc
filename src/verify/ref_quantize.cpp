// The type table and per-block dispatch of verify's re-quantizer (ref_quantize.hpp); the block
// arithmetic is in ref_quantize_legacy.cpp, ref_quantize_k.cpp and ref_quantize_nonlinear.cpp.
#include "ref_quantize.hpp"

#include "ref_quantize_blocks.hpp"

namespace rebox::verify_ref {

namespace {

// ggml type ids (ggml.h)
constexpr uint32_t kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ2_K = 10, kQ3_K = 11,
                   kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kIQ4_NL = 20, kIQ4_XS = 23, kMXFP4 = 39;

bool uses_row_sigma2(uint32_t type) {
    return type == kQ4_0 || type == kQ4_1 || type == kQ5_0 || type == kQ5_1;
}

}  // namespace

bool ref_quant_layout(uint32_t ggml_type_id, RefQuantLayout* layout) {
    RefQuantLayout found{};
    switch (ggml_type_id) {
        case kQ4_0:
            found = {32, 18};
            break;
        case kQ4_1:
            found = {32, 20};
            break;
        case kQ5_0:
            found = {32, 22};
            break;
        case kQ5_1:
            found = {32, 24};
            break;
        case kQ8_0:
            found = {32, 34};
            break;
        case kQ2_K:
            found = {256, 84};
            break;
        case kQ3_K:
            found = {256, 110};
            break;
        case kQ4_K:
            found = {256, 144};
            break;
        case kQ5_K:
            found = {256, 176};
            break;
        case kQ6_K:
            found = {256, 210};
            break;
        case kIQ4_NL:
            found = {32, 18};
            break;
        case kIQ4_XS:
            found = {256, 136};
            break;
        case kMXFP4:
            found = {32, 17};
            break;
        default:
            return false;
    }
    if (layout) *layout = found;
    return true;
}

QuantRow make_quant_row(uint32_t ggml_type_id, std::span<const float> values,
                        std::span<const float> importance) {
    QuantRow row{values, importance, 0.f};
    if (!importance.empty() && uses_row_sigma2(ggml_type_id)) {
        float sum = 0;  // sequential, in index order, as ggml sums it
        for (const float v : values) sum += v * v;
        row.row_sigma2 = sum / static_cast<float>(values.size());
    }
    return row;
}

void ref_quantize_block(uint32_t ggml_type_id, const QuantRow& row, uint64_t block_index,
                        std::span<uint8_t> out) {
    RefQuantLayout layout{};
    if (!ref_quant_layout(ggml_type_id, &layout)) return;
    const uint64_t first = block_index * layout.block_values;
    const float* x = row.values.data() + first;
    const float* w = row.importance.empty() ? nullptr : row.importance.data() + first;
    const float s2 = row.row_sigma2;
    uint8_t* y = out.data();
    switch (ggml_type_id) {
        case kQ4_0:
            quant_blocks::q4_0(x, w, s2, y);
            break;
        case kQ4_1:
            quant_blocks::q4_1(x, w, s2, y);
            break;
        case kQ5_0:
            quant_blocks::q5_0(x, w, s2, y);
            break;
        case kQ5_1:
            quant_blocks::q5_1(x, w, s2, y);
            break;
        case kQ8_0:
            quant_blocks::q8_0(x, y);
            break;
        case kQ2_K:
            quant_blocks::q2_k(x, w, y);
            break;
        case kQ3_K:
            quant_blocks::q3_k(x, w, y);
            break;
        case kQ4_K:
            quant_blocks::q4_k(x, w, y);
            break;
        case kQ5_K:
            quant_blocks::q5_k(x, w, y);
            break;
        case kQ6_K:
            quant_blocks::q6_k(x, w, y);
            break;
        case kIQ4_NL:
            quant_blocks::iq4_nl(x, w, y);
            break;
        case kIQ4_XS:
            quant_blocks::iq4_xs(x, w, y);
            break;
        case kMXFP4:
            quant_blocks::mxfp4(x, y);
            break;
        default:
            break;
    }
}

}  // namespace rebox::verify_ref
